"""The user's config folder: config.toml (and its old place), the keys `coder-agent login` saves, where each
setting came from."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from coder_agent.config.keystore import KeyStore
from coder_agent.config.settings import Settings
from coder_agent.config.userfiles import set_top_level, toml_string
from coder_agent.kit.credentials import child_environment

KEY = "sk-ant-saved-by-login-0123456789"


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    path = tmp_path / "user"
    path.mkdir()
    return path


def env_of(user_home: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(user_home), **extra}


def config_folder(user_home: Path) -> Path:
    return user_home / ".config" / "coder-agent"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_the_config_folders_config_toml_is_read_and_wins_over_the_old_place(user_home: Path) -> None:
    new = write(config_folder(user_home) / "config.toml", 'model = "openai/new-place"\n')
    old = write(user_home / ".local/share/coder-agent/config.toml", 'model = "openai/old"\nmax_tokens = 77\n')
    settings = Settings.load(env_of(user_home))
    assert settings.model == "openai/new-place"
    assert settings.max_tokens == 77  # the old place is still read
    assert settings.sources["model"] == str(new) and settings.sources["max_tokens"] == str(old)
    [notice] = settings.notices
    assert str(old) in notice and str(new) in notice and "move" in notice


def test_without_a_file_at_the_old_place_nothing_is_said(user_home: Path) -> None:
    write(config_folder(user_home) / "config.toml", 'model = "openai/x"\n')
    assert Settings.load(env_of(user_home)).notices == []


def test_sources_name_the_environment_the_dotenv_and_the_defaults(user_home: Path) -> None:
    dotenv = write(config_folder(user_home) / ".env", "CODER_AGENT_MAX_RETRIES=5\n")
    settings = Settings.load(env_of(user_home, CODER_AGENT_MODEL="openai/env"))
    assert settings.sources["model"] == "environment"
    assert settings.sources["max_retries"] == str(dotenv)
    assert settings.sources["request_timeout"] == "default"
    assert settings.config_dir == config_folder(user_home)


def test_coder_agent_config_dir_moves_the_config_folder(user_home: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "cfg"
    write(elsewhere / "config.toml", 'model = "openai/elsewhere"\n')
    settings = Settings.load(env_of(user_home, CODER_AGENT_CONFIG_DIR=str(elsewhere)))
    assert settings.config_dir == elsewhere and settings.model == "openai/elsewhere"


def test_saved_keys_reach_the_environment_but_not_children_and_the_environment_wins(user_home: Path) -> None:
    store = KeyStore(config_folder(user_home))
    store.save("ANTHROPIC_API_KEY", KEY, where="file")
    store.save("OPENAI_API_KEY", "sk-saved-openai-0000000000", where="file")
    env = env_of(user_home, OPENAI_API_KEY="sk-from-the-editor-1111111111", MY_COPY=KEY)
    settings = Settings.load(env)
    assert env["ANTHROPIC_API_KEY"] == KEY
    assert env["OPENAI_API_KEY"] == "sk-from-the-editor-1111111111"
    assert settings.saved_keys == {"ANTHROPIC_API_KEY"}
    child = child_environment(env)
    assert "ANTHROPIC_API_KEY" not in child and "MY_COPY" not in child  # a copy of a saved key is withheld too
    assert KEY not in child.values()


def test_reload_drops_a_key_removed_since(user_home: Path) -> None:
    store = KeyStore(config_folder(user_home))
    store.save("ANTHROPIC_API_KEY", KEY, where="file")
    env = env_of(user_home)
    settings = Settings.load(env, lenient=True)
    assert env["ANTHROPIC_API_KEY"] == KEY
    store.remove()
    again = settings.reload()
    assert "ANTHROPIC_API_KEY" not in env and again.saved_keys == frozenset()


def test_the_keys_file_is_private_and_holds_only_the_agents_variables(user_home: Path) -> None:
    folder = config_folder(user_home)
    store = KeyStore(folder)
    assert store.save("ANTHROPIC_API_KEY", KEY, where="file") == str(folder / "credentials.toml")
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    with pytest.raises(ValueError, match="not a key variable"):
        store.save("PATH", "/tmp/evil", where="file")
    store.path.write_text(store.path.read_text() + 'LD_PRELOAD = "/tmp/evil.so"\n')
    loaded = store.load()
    assert loaded.keys == {"ANTHROPIC_API_KEY": KEY}
    assert any("LD_PRELOAD" in problem for problem in loaded.problems)
    assert KEY not in "".join(loaded.problems)


def test_logout_removes_every_saved_key(user_home: Path) -> None:
    store = KeyStore(config_folder(user_home))
    store.save("ANTHROPIC_API_KEY", KEY, where="file")
    store.save("CODER_AGENT_API_KEY", "local-server-key-123", where="file")
    assert store.remove() == ["ANTHROPIC_API_KEY", "CODER_AGENT_API_KEY"]
    assert store.load().keys == {} and store.names() == []


class FakeKeyring:
    """A keyring backend kept in memory (the `keyring` package's three calls)."""

    def __init__(self) -> None:
        self.saved: dict[tuple[str, str], str] = {}

    def get_password(self, service_name: str, username: str) -> str | None:
        return self.saved.get((service_name, username))

    def set_password(self, service_name: str, username: str, password: str) -> None:
        self.saved[(service_name, username)] = password

    def delete_password(self, service_name: str, username: str) -> None:
        del self.saved[(service_name, username)]


def test_with_a_keyring_the_key_goes_there_and_the_file_names_it_only(user_home: Path) -> None:
    keyring = FakeKeyring()
    store = KeyStore(config_folder(user_home), keyring)
    assert store.save("ANTHROPIC_API_KEY", KEY) == "the OS keyring"
    assert KEY not in store.path.read_text() and "ANTHROPIC_API_KEY" in store.path.read_text()
    assert store.load().keys == {"ANTHROPIC_API_KEY": KEY}
    assert store.remove() == ["ANTHROPIC_API_KEY"] and keyring.saved == {}


def test_toml_written_by_hand_helpers_reads_back() -> None:
    import tomllib

    tricky = 'a "quoted"\\ value\nwith\ttabs\x7f and é'
    assert tomllib.loads(f"x = {toml_string(tricky)}")["x"] == tricky
    text = set_top_level('# mine\nmodel = "old"\n\n[table]\nmodel = "inner"\n', {"model": "new", "api_base": "u"})
    document = tomllib.loads(text)
    assert document["model"] == "new" and document["api_base"] == "u" and document["table"]["model"] == "inner"
    assert text.startswith("# mine\n")
