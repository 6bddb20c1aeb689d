"""What the settings peek finds before the settings are loaded (the model for `initialize`; the model, menu and
mode for the early `session/new`) is what `Settings.load` finds, whenever the peek says it read exactly."""

from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import Any, cast

import pytest

from coder_agent.config.keystore import KeyStore
from coder_agent.config.settings import Settings
from coder_agent.llm.direct_model import DirectModel
from coder_agent.llm.litellm_model import LiteLLMModel
from coder_agent.llm.wire.config import ModelConfig
from coder_agent.prestart.capabilities import initialize_result
from coder_agent.prestart.settings_peek import ModelPeek, Peek, configured_images, configured_model, peek, peek_model
from coder_agent.server.assembly import model_factory
from coder_agent.server.session_mcp import SessionMcp
from coder_agent.server.settings_problems import NEEDED_BY


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


CASES = {
    "environment": ({"CODER_AGENT_MODEL": "openai/gpt-4o"}, {}),
    "config .env": ({}, {"config/coder-agent/.env": 'export CODER_AGENT_MODEL="anthropic/claude-sonnet-4-5"  # ok\n'}),
    "a blank variable hides the files": (
        {"CODER_AGENT_MODEL": "  "},
        {"config/coder-agent/.env": "CODER_AGENT_MODEL=openai/gpt-4o\n"},
    ),
    "config .env moves the data folder": (
        {},
        {
            "config/coder-agent/.env": "CODER_AGENT_HOME={root}/elsewhere\n",
            "elsewhere/.env": "CODER_AGENT_MODEL=openai/gpt-4o-mini # cheap\n",
        },
    ),
    "config.toml": ({}, {"data/coder-agent/config.toml": "model = 'openai/gpt-4o'\n[tables]\nmodel = 'no'\n"}),
    "a table's model is not the model": ({}, {"data/coder-agent/config.toml": "[profile]\nmodel = 'openai/gpt-4o'\n"}),
    "nothing": ({}, {}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_peek_finds_the_model_the_settings_find(case: str, tmp_path: Path) -> None:
    variables, files = CASES[case]
    for name, text in files.items():
        write(tmp_path / name, text.format(root=tmp_path))
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    env |= {"XDG_DATA_HOME": str(tmp_path / "data"), **variables}
    expected = Settings.load(dict(env)).model
    assert configured_model(dict(env)) == expected
    assert (expected is None) == (
        case in ("nothing", "a blank variable hides the files", "a table's model is not the model")
    )


def test_initialize_offers_images_when_the_configured_model_takes_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODER_AGENT_MODEL", "openai/gpt-4o")
    assert initialize_result()["agentCapabilities"]["promptCapabilities"]["image"] is True
    monkeypatch.setenv("CODER_AGENT_MODEL", "openai/my-local-model")
    assert initialize_result()["agentCapabilities"]["promptCapabilities"]["image"] is False
    monkeypatch.setenv("CODER_AGENT_IMAGES", "true")  # a local vision model litellm does not list
    assert initialize_result()["agentCapabilities"]["promptCapabilities"]["image"] is True


@pytest.mark.parametrize(
    ("variable", "toml"),
    [(None, None), ("true", None), ("No", None), ("1", None), (None, "images = true"), (None, "images = false")],
)
def test_the_early_initialize_reads_images_as_the_settings_do(
    variable: str | None, toml: str | None, tmp_path: Path
) -> None:
    env = {"HOME": str(tmp_path), "CODER_AGENT_MODEL": "openai/my-local-model"}
    if variable is not None:
        env["CODER_AGENT_IMAGES"] = variable
    if toml is not None:
        write(tmp_path / ".config" / "coder-agent" / "config.toml", toml + "\n")
    assert configured_images(dict(env)) == ("openai/my-local-model", Settings.load(dict(env)).images)


# (variables, files, whether the peek reads them exactly): the early `session/new` answers only when it does
SESSION_CASES: dict[str, tuple[dict[str, str], dict[str, str], bool]] = {
    "defaults": ({}, {}, True),
    "environment": (
        {
            "CODER_AGENT_MODEL": "openai/a",
            "CODER_AGENT_MODELS": "openai/b, ,openai/a",
            "CODER_AGENT_DEFAULT_MODE": "plan",
        },
        {},
        True,
    ),
    "config folder's config.toml": (
        {},
        {"config/coder-agent/config.toml": 'model = "openai/t"\nmodels = ["openai/u"]\ndefault_mode = "plan"\n'},
        True,
    ),
    "the old config.toml, under the new one key by key": (
        {},
        {
            "config/coder-agent/config.toml": 'model = "openai/new"\n',
            "data/coder-agent/config.toml": 'model = "openai/old"\nmodels = "openai/x,openai/y"\n',
        },
        True,
    ),
    "the environment over config.toml": (
        {"CODER_AGENT_DEFAULT_MODE": "bypass"},
        {"config/coder-agent/config.toml": 'default_mode = "plan"\nmodel = "openai/t"\n'},
        True,
    ),
    "an empty .env value hides config.toml's": (
        {},
        {"config/coder-agent/.env": "CODER_AGENT_MODEL=\n", "config/coder-agent/config.toml": 'model = "openai/t"\n'},
        True,
    ),
    "CODER_AGENT_CONFIG_DIR": (
        {"CODER_AGENT_CONFIG_DIR": "{root}/elsewhere"},
        {"elsewhere/config.toml": 'model = "openai/e"\n', "config/coder-agent/config.toml": 'model = "openai/no"\n'},
        True,
    ),
    "valid timeouts": (
        {"CODER_AGENT_MCP_TIMEOUT": "15"},
        {"config/coder-agent/config.toml": "mcp_call_timeout = 2.5\n"},
        True,
    ),
    "a bad default mode": ({"CODER_AGENT_DEFAULT_MODE": "yolo"}, {}, False),
    "a bad timeout": ({"CODER_AGENT_MCP_TIMEOUT": "soon"}, {}, False),
    "a zero timeout in config.toml": ({}, {"config/coder-agent/config.toml": "mcp_timeout = 0\n"}, False),
    "models of the wrong type": ({}, {"config/coder-agent/config.toml": "models = 5\n"}, False),
    "a model of the wrong type": ({}, {"config/coder-agent/config.toml": "model = 5\n"}, False),
    "a broken config.toml": ({}, {"config/coder-agent/config.toml": "model = \n"}, False),
    "a .env that is a folder": ({}, {"config/coder-agent/.env/x": ""}, False),
}


def settings_env(tmp_path: Path, variables: dict[str, str], files: dict[str, str]) -> dict[str, str]:
    """The environment of a user whose folders are in `tmp_path` (`{root}` in a value or a file stands for it)."""
    for name, text in files.items():
        write(tmp_path / name, text.replace("{root}", str(tmp_path)))
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    variables = {name: value.replace("{root}", str(tmp_path)) for name, value in variables.items()}
    return env | {"XDG_DATA_HOME": str(tmp_path / "data")} | variables


def assert_peek_agrees(env: dict[str, str]) -> Peek:
    """An exact peek finds what the settings find, and settings `session/new` would be refused for are never exact."""
    found = peek(dict(env))
    settings = Settings.load(dict(env), lenient=True)
    refused = [name for name in settings.problems if "session/new" in NEEDED_BY.get(name, ())]
    if found.exact:
        assert (found.model, list(found.models), found.default_mode, found.home, found.config_dir) == (
            settings.model,
            settings.models,
            settings.default_mode,
            str(settings.home),
            str(settings.config_dir),  # where the early stage reads the user's commands
        )
        assert refused == []
    return found


@pytest.mark.parametrize("case", list(SESSION_CASES))
def test_an_exact_peek_finds_the_session_settings_the_settings_find(case: str, tmp_path: Path) -> None:
    variables, files, exact = SESSION_CASES[case]
    assert assert_peek_agrees(settings_env(tmp_path, variables, files)).exact is exact


DOTENV_LINES = {
    "comment": ("CODER_AGENT_MODEL=openai/a # the model\n", True),
    "hash without a space": ("CODER_AGENT_MODEL=openai/a#b\n", True),
    "starts with a hash": ("CODER_AGENT_MODEL=#x\n", True),
    "single quotes": ("CODER_AGENT_MODEL='openai/a # b' # c\n", True),
    "double quotes": ('CODER_AGENT_MODEL = "openai/a b"\n', True),
    "export and spaces": ("export CODER_AGENT_MODEL = openai/a\n", True),
    "export and a tab": ("export\tCODER_AGENT_MODEL=openai/a\n", True),
    "not export": ("exportCODER_AGENT_MODEL=openai/a\n", True),
    "tabs around": ("CODER_AGENT_MODEL=\topenai/a\t\n", True),
    "spaces inside": ("CODER_AGENT_MODEL=a b c   # c\n", True),
    "the last one wins": ("CODER_AGENT_MODEL=openai/first\nCODER_AGENT_MODEL=openai/second\n", True),
    "no equals sign": ("CODER_AGENT_MODEL\nCODER_AGENT_DEFAULT_MODE=plan\n", True),
    "junk after quotes": ("CODER_AGENT_MODEL='openai/a' junk\n", True),
    "comments and blanks": ("  # a comment\n\n   \nCODER_AGENT_MODELS=openai/x,openai/y\n", True),
    "carriage returns": ("CODER_AGENT_MODEL=openai/a\rCODER_AGENT_DEFAULT_MODE=plan\r\n", True),
    "an escape": ('CODER_AGENT_MODEL="openai/\\"a\\""\n', False),
    "a value over two lines": ('CODER_AGENT_MODEL="openai/a\nb"\n', False),
    "a form feed": ("CODER_AGENT_MODEL=openai/a\x0cb\n", False),
    "a quoted key": ("'CODER_AGENT_MODEL'=openai/a\n", False),
}


@pytest.mark.parametrize("case", list(DOTENV_LINES))
def test_an_exact_peek_reads_dotenv_files_as_python_dotenv_does(case: str, tmp_path: Path) -> None:
    text, exact = DOTENV_LINES[case]
    env = settings_env(tmp_path, {}, {"config/coder-agent/config.toml": 'model = "openai/toml"\n'})
    (tmp_path / "config" / "coder-agent" / ".env").write_text(text, encoding="utf-8")
    assert assert_peek_agrees(env).exact is exact


# --- peek_model: the early first model call's ModelConfig, environment and MCP answer ---------------------------


def runtime_model(env: dict[str, str]) -> tuple[ModelConfig | None, dict[str, str], Settings]:
    """What the runtime builds: `Settings.load(lenient=True)` (it adds to the environ it is given), then
    `model_factory`'s model; None when there is no model or a prompt (or the session) would be refused."""
    given = dict(env)
    settings = Settings.load(given, lenient=True)
    refused = [name for name in settings.problems if {"session/new", "session/prompt"} & set(NEEDED_BY.get(name, ()))]
    if settings.model is None or refused:
        return None, given, settings
    model = model_factory(lambda: settings)(settings.model, None, "sess_1")
    assert isinstance(model, DirectModel | LiteLLMModel)
    return model.config, given, settings


def typed(config: ModelConfig) -> list[tuple[type, object]]:
    return [(type(value), value) for value in config.as_dict().values()]  # 30 and 30.0 differ here


def assert_model_peek_agrees(env: dict[str, str]) -> ModelPeek | None:
    """A peek that finds a model finds the runtime's config and environment; never one the runtime would refuse."""
    given = dict(env)
    found = peek_model(given)
    assert given == env  # the caller's mapping is left alone
    expected, environ, settings = runtime_model(env)
    if found is not None:
        assert expected is not None
        assert typed(found.config) == typed(expected)
        assert found.environ == environ
        servers = SessionMcp(lambda: settings, cast(Any, None), cast(Any, None)).user_servers()
        assert found.mcp_servers or not servers  # servers the runtime starts are never missed
    return found


@pytest.fixture(autouse=True)
def no_os_keyring(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("coder_agent.config.keystore.system_keyring", lambda: None)


KEY = "sk-test-0123456789"
CONFIG, DATA = "config/coder-agent/", "data/coder-agent/"

# (variables, files, the ModelConfig's fields peek_model finds, or None when it finds none)
MODEL_CASES: dict[str, tuple[dict[str, str], dict[str, str], dict[str, object] | None]] = {
    "the environment": (
        {
            "CODER_AGENT_MODEL": "openai/gpt-4o",
            "CODER_AGENT_API_KEY": KEY,
            "CODER_AGENT_REQUEST_TIMEOUT": "30",
            "CODER_AGENT_MAX_RETRIES": "5",
            "CODER_AGENT_RETRY_BASE_DELAY": "0.5",
            "CODER_AGENT_MAX_TOKENS": "4096",
        },
        {},
        {"model": "openai/gpt-4o", "api_key": KEY, "timeout": 30.0, "max_retries": 5, "retry_base_delay": 0.5},
    ),
    "a server without a key gets the placeholder": (
        {"CODER_AGENT_MODEL": "openai/local", "CODER_AGENT_API_BASE": "http://127.0.0.1:8000/v1"},
        {},
        {"api_base": "http://127.0.0.1:8000/v1", "api_key": "no-key"},
    ),
    "blank key and base are unset": (
        {"CODER_AGENT_MODEL": "openai/gpt-4o", "CODER_AGENT_API_KEY": "  ", "CODER_AGENT_API_BASE": ""},
        {},
        {"api_base": None, "api_key": None},
    ),
    "a provider key variable": (
        {"CODER_AGENT_MODEL": "openai/gpt-4o", "OPENAI_API_KEY": f"  {KEY}\t"},
        {},
        {"api_key": KEY},
    ),
    "a bare model name's provider key": ({"CODER_AGENT_MODEL": "claude-sonnet-4-5", "ANTHROPIC_API_KEY": KEY}, {}, {}),
    "litellm reads the provider's other variables": (
        {"CODER_AGENT_MODEL": "anthropic/claude-sonnet-4-5", "ANTHROPIC_AUTH_TOKEN": KEY},
        {},
        {"api_key": None},
    ),
    "CODER_AGENT_API_KEY over the provider's": (
        {"CODER_AGENT_MODEL": "openai/gpt-4o", "CODER_AGENT_API_KEY": "mine-0123456789", "OPENAI_API_KEY": KEY},
        {},
        {"api_key": "mine-0123456789"},
    ),
    "config.toml": (
        {},
        {
            CONFIG + "config.toml": 'model = "openai/t"\napi_base = "http://h/v1"\nrequest_timeout = 45\n'
            "max_retries = 0\nretry_base_delay = 2\nmax_tokens = 1000\nmax_turn_requests = 5\n",
            DATA + "config.toml": 'api_key = "from-the-old-file"\nmodel = "openai/old"\nrequest_timeout = 9.5\n',
        },
        {"model": "openai/t", "api_key": "from-the-old-file", "timeout": 45.0, "max_retries": 0, "max_tokens": 1000},
    ),
    "the environment over config.toml": (
        {"CODER_AGENT_REQUEST_TIMEOUT": "7.25", "CODER_AGENT_MAX_TOKENS": "12"},
        {CONFIG + "config.toml": 'model = "openai/t"\nrequest_timeout = 45\nmax_tokens = 1000\n'},
        {"timeout": 7.25, "max_tokens": 12},
    ),
    "the user's .env files": (
        {"XAI_API_KEY": "from-the-environment"},
        {
            CONFIG + ".env": "CODER_AGENT_MODEL=anthropic/claude-sonnet-4-5\nANTHROPIC_API_KEY=" + KEY + "\n",
            DATA + ".env": "CODER_AGENT_REQUEST_TIMEOUT=30.5\nOPENAI_API_KEY=other-0123456789\nXAI_API_KEY=no\n",
        },
        {"api_key": KEY, "timeout": 30.5},
    ),
    "CODER_AGENT_CONFIG_DIR and CODER_AGENT_HOME": (
        {"CODER_AGENT_CONFIG_DIR": "{root}/cfg", "CODER_AGENT_HOME": "{root}/home-data"},
        {
            "cfg/.env": "CODER_AGENT_MODEL=openai/gpt-4o\n",
            "home-data/.env": "OPENAI_API_KEY=" + KEY + "\n",
            "home-data/config.toml": "max_retries = 7\n",
            CONFIG + ".env": "CODER_AGENT_MODEL=openai/not-read\n",
        },
        {"api_key": KEY, "max_retries": 7},
    ),
    "keys in credentials.toml": (
        {"CODER_AGENT_MODEL": "openai/gpt-4o", "GROQ_API_KEY": "from-the-environment"},
        {
            CONFIG + "credentials.toml": f'[keys]\nOPENAI_API_KEY = " {KEY} "\nGROQ_API_KEY = "saved-groq-key"\n'
            'NOT_OURS = "x"\nXAI_API_KEY = "  "\nMISTRAL_API_KEY = 5\n'
        },
        {"api_key": KEY},
    ),
    "a setting in credentials.toml": (
        {},
        {CONFIG + "credentials.toml": '[keys]\nCODER_AGENT_MODEL = "openai/saved"\nCODER_AGENT_MAX_RETRIES = "2"\n'},
        {"model": "openai/saved", "max_retries": 2},
    ),
    "a keyring name already set": (
        {"CODER_AGENT_MODEL": "openai/gpt-4o", "OPENAI_API_KEY": KEY},
        {CONFIG + "credentials.toml": '[keyring]\nnames = ["OPENAI_API_KEY", "NOT_OURS", 3]\n'},
        {"api_key": KEY},
    ),
    "other settings' problems do not matter": (
        {"CODER_AGENT_MODEL": "openai/gpt-4o", "CODER_AGENT_LOG_LEVEL": "loud", "CODER_AGENT_COMPACT_AT": "2"},
        {},
        {},
    ),
    # None: no model, a setting the runtime would refuse the session or the prompt for, or a source read unsurely
    "no model": ({"OPENAI_API_KEY": KEY}, {}, None),
    "a blank model": ({"CODER_AGENT_MODEL": " "}, {CONFIG + "config.toml": 'model = "openai/t"\n'}, None),
    "a model of the wrong type": ({}, {CONFIG + "config.toml": "model = 4\n"}, None),
    "an api key of the wrong type": (
        {"CODER_AGENT_MODEL": "openai/a"},
        {CONFIG + "config.toml": "api_key = 4\n"},
        None,
    ),
    "a word for a timeout": ({"CODER_AGENT_MODEL": "openai/a", "CODER_AGENT_REQUEST_TIMEOUT": "soon"}, {}, None),
    "a zero timeout": ({"CODER_AGENT_MODEL": "openai/a", "CODER_AGENT_REQUEST_TIMEOUT": "0"}, {}, None),
    "a timeout of true": (
        {"CODER_AGENT_MODEL": "openai/a"},
        {CONFIG + "config.toml": "request_timeout = true\n"},
        None,
    ),
    "too many retries": ({"CODER_AGENT_MODEL": "openai/a", "CODER_AGENT_MAX_RETRIES": "11"}, {}, None),
    "a negative delay": ({"CODER_AGENT_MODEL": "openai/a"}, {CONFIG + "config.toml": "retry_base_delay = -1\n"}, None),
    "a blank max_tokens": ({"CODER_AGENT_MODEL": "openai/a", "CODER_AGENT_MAX_TOKENS": ""}, {}, None),
    "zero turn requests": ({"CODER_AGENT_MODEL": "openai/a", "CODER_AGENT_MAX_TURN_REQUESTS": "0"}, {}, None),
    "a bad default mode": ({"CODER_AGENT_MODEL": "openai/a", "CODER_AGENT_DEFAULT_MODE": "yolo"}, {}, None),
    "a bad MCP timeout": ({"CODER_AGENT_MODEL": "openai/a", "CODER_AGENT_MCP_TIMEOUT": "-2"}, {}, None),
    "models of the wrong type": ({"CODER_AGENT_MODEL": "openai/a"}, {CONFIG + "config.toml": "models = 5\n"}, None),
    "a broken config.toml": ({"CODER_AGENT_MODEL": "openai/a"}, {CONFIG + "config.toml": "model = \n"}, None),
    "a .env with an escape": ({}, {CONFIG + ".env": 'CODER_AGENT_MODEL="openai/\\"a\\""\n'}, None),
    "a .env that is a folder": ({"CODER_AGENT_MODEL": "openai/a"}, {CONFIG + ".env/x": ""}, None),
    "a broken credentials.toml": ({"CODER_AGENT_MODEL": "openai/a"}, {CONFIG + "credentials.toml": "[keys\n"}, None),
    "a credentials.toml that is a folder": (
        {"CODER_AGENT_MODEL": "openai/a"},
        {CONFIG + "credentials.toml/x": ""},
        None,
    ),
    "a key in the OS keyring": (
        {"CODER_AGENT_MODEL": "openai/a"},
        {CONFIG + "credentials.toml": '[keyring]\nnames = ["OPENAI_API_KEY"]\n'},
        None,
    ),
    "odd keyring names": (
        {"CODER_AGENT_MODEL": "openai/a"},
        {CONFIG + "credentials.toml": '[keyring]\nnames = "OPENAI_API_KEY"\n'},
        None,
    ),
    "an mcp.json that is not JSON": ({"CODER_AGENT_MODEL": "openai/a"}, {CONFIG + "mcp.json": "{servers}"}, None),
    "an mcp.json without servers": ({"CODER_AGENT_MODEL": "openai/a"}, {CONFIG + "mcp.json": '{"servers": {}}'}, None),
    "an mcp.json that is a folder": ({"CODER_AGENT_MODEL": "openai/a"}, {CONFIG + "mcp.json/x": ""}, None),
}


@pytest.mark.parametrize("case", list(MODEL_CASES))
def test_peek_model_finds_the_config_the_runtime_builds(case: str, tmp_path: Path) -> None:
    variables, files, fields = MODEL_CASES[case]
    env = settings_env(tmp_path, variables, files)
    found = assert_model_peek_agrees(env)
    if fields is None:
        assert found is None
        return
    assert found is not None
    for name, value in fields.items():
        assert getattr(found.config, name) == value, name
    assert found.config.reasoning_effort is None


def test_peek_model_returns_the_environment_the_settings_leave(tmp_path: Path) -> None:
    variables, files, _ = MODEL_CASES["the user's .env files"]
    found = assert_model_peek_agrees(settings_env(tmp_path, variables, files))
    assert found is not None
    assert found.environ["OPENAI_API_KEY"] == "other-0123456789"  # from the data folder's .env
    assert found.environ["XAI_API_KEY"] == "from-the-environment"  # what is set wins


@pytest.mark.parametrize("where", ["config folder", "CODER_AGENT_CONFIG_DIR"])
def test_peek_model_adds_the_keys_login_saved(where: str, tmp_path: Path) -> None:
    variables = {"CODER_AGENT_MODEL": "openai/gpt-4o", "ANTHROPIC_API_KEY": "from-the-environment"}
    if where != "config folder":
        variables["CODER_AGENT_CONFIG_DIR"] = "{root}/elsewhere"
    env = settings_env(tmp_path, variables, {})
    folder = Path(env.get("CODER_AGENT_CONFIG_DIR") or tmp_path / "config" / "coder-agent")
    store = KeyStore(folder)
    assert store.save("OPENAI_API_KEY", KEY, "file") == str(folder / "credentials.toml")
    store.save("ANTHROPIC_API_KEY", "saved-anthropic-key", "file")
    found = assert_model_peek_agrees(env)
    assert found is not None
    assert found.config.api_key == KEY
    assert found.environ["OPENAI_API_KEY"] == KEY
    assert found.environ["ANTHROPIC_API_KEY"] == "from-the-environment"


def test_peek_model_takes_the_login_key_for_a_local_server(tmp_path: Path) -> None:
    env = settings_env(
        tmp_path, {}, {CONFIG + "config.toml": 'model = "openai/q"\napi_base = "http://127.0.0.1:1/v1"\n'}
    )
    KeyStore(tmp_path / "config" / "coder-agent").save("CODER_AGENT_API_KEY", "local-key", "file")
    found = assert_model_peek_agrees(env)
    assert found is not None
    assert (found.config.api_base, found.config.api_key) == ("http://127.0.0.1:1/v1", "local-key")


SERVER = '{"command": "npx", "args": ["-y", "server"]}'

# (variables, files, mcp_servers)
MCP_CASES: dict[str, tuple[dict[str, str], dict[str, str], bool]] = {
    "no mcp.json": ({}, {}, False),
    "an mcp.json with a server": ({}, {CONFIG + "mcp.json": f'{{"mcpServers": {{"git": {SERVER}}}}}'}, True),
    "an http server": ({}, {CONFIG + "mcp.json": '{"mcpServers": {"docs": {"url": "https://e.com/mcp"}}}'}, True),
    "an empty mcpServers": ({}, {CONFIG + "mcp.json": '{"mcpServers": {}}'}, False),
    "only disabled servers": (
        {},
        {CONFIG + "mcp.json": '{"mcpServers": {"git": {"command": "git", "disabled": true}, " ": {"command": "x"}}}'},
        False,
    ),
    "a server among disabled ones": (
        {},
        {CONFIG + "mcp.json": f'{{"mcpServers": {{"a": {{"command": "a", "disabled": true}}, "git": {SERVER}}}}}'},
        True,
    ),
    "the data folder's mcp.json is not read": (
        {},
        {DATA + "mcp.json": f'{{"mcpServers": {{"git": {SERVER}}}}}'},
        False,
    ),
    "CODER_AGENT_MCP_CONFIG": ({"CODER_AGENT_MCP_CONFIG": "{root}/servers.json"}, {}, True),
    "CODER_AGENT_MCP_CONFIG with servers": (
        {"CODER_AGENT_MCP_CONFIG": "{root}/servers.json"},
        {"servers.json": f'{{"mcpServers": {{"git": {SERVER}}}}}'},
        True,
    ),
    "an empty CODER_AGENT_MCP_CONFIG": ({"CODER_AGENT_MCP_CONFIG": ""}, {}, True),
    "mcp_config in config.toml": ({}, {CONFIG + "config.toml": 'mcp_config = ["{root}/servers.json"]\n'}, True),
    "mcp.json in CODER_AGENT_CONFIG_DIR": (
        {"CODER_AGENT_CONFIG_DIR": "{root}/elsewhere"},
        {"elsewhere/mcp.json": f'{{"mcpServers": {{"git": {SERVER}}}}}'},
        True,
    ),
}


@pytest.mark.parametrize("case", list(MCP_CASES))
def test_peek_model_says_whether_the_users_config_gives_mcp_servers(case: str, tmp_path: Path) -> None:
    variables, files, servers = MCP_CASES[case]
    env = settings_env(tmp_path, {"CODER_AGENT_MODEL": "openai/gpt-4o", **variables}, files)
    found = assert_model_peek_agrees(env)
    assert found is not None
    assert found.mcp_servers is servers


# (the value, whether peek_model reads it): what it does not read surely it leaves to the runtime
NUMBERS: dict[str, list[tuple[str, bool]]] = {
    "CODER_AGENT_REQUEST_TIMEOUT": [
        *[("30", True), ("30.5", True), ("007", True), ("0.25", True), ("000.000100", True), ("1" * 30, True)],
        *[("1e2", False), (" 30", False), ("30 ", False), ("+3", False), ("inf", False), ("nan", False)],
        *[("-1", False), ("0", False), ("0.0", False), ("", False), ("3_0", False), (".5", False), ("5.", False)],
    ],
    "CODER_AGENT_RETRY_BASE_DELAY": [("0", True), ("0.0", True), ("2", True), ("-0.5", False), ("x", False)],
    "CODER_AGENT_MAX_RETRIES": [
        *[("0", True), ("10", True), ("007", True), ("11", False), ("3.0", False), (" 3", False), ("-1", False)],
    ],
    "CODER_AGENT_MAX_TOKENS": [("1", True), ("128000", True), ("0", False), ("1.5", False), ("none", False)],
    "CODER_AGENT_MAX_TURN_REQUESTS": [("1", True), ("0", False), ("1e3", False)],
}


@pytest.mark.parametrize(
    ("variable", "value", "read"), [(name, value, read) for name, values in NUMBERS.items() for value, read in values]
)
def test_peek_model_reads_numbers_as_pydantic_does(variable: str, value: str, read: bool, tmp_path: Path) -> None:
    env = settings_env(tmp_path, {"CODER_AGENT_MODEL": "openai/gpt-4o", variable: value}, {})
    assert (assert_model_peek_agrees(env) is not None) is read


TOML_NUMBERS = [
    *[("request_timeout = 30", True), ("request_timeout = 0.5", True), ("request_timeout = inf", False)],
    *[("request_timeout = nan", False), ("request_timeout = false", False), ('request_timeout = "30"', True)],
    *[("max_retries = 3", True), ("max_retries = 3.0", False), ("max_retries = true", False)],
    *[("max_tokens = 100", True), ("max_tokens = 1e3", False), ("retry_base_delay = 0", True)],
]


@pytest.mark.parametrize(("line", "read"), TOML_NUMBERS)
def test_peek_model_reads_toml_numbers_as_pydantic_does(line: str, read: bool, tmp_path: Path) -> None:
    env = settings_env(tmp_path, {"CODER_AGENT_MODEL": "openai/gpt-4o"}, {CONFIG + "config.toml": line + "\n"})
    assert (assert_model_peek_agrees(env) is not None) is read


def test_peek_model_without_user_files_reads_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODER_AGENT_CONFIG_DIR", "/nonexistent/coder-agent-config")
    monkeypatch.setenv("CODER_AGENT_HOME", "/nonexistent/coder-agent-data")
    monkeypatch.setenv("CODER_AGENT_MODEL", "openai/from-the-process")
    found = peek_model()
    assert found is not None
    assert found.config.model == "openai/from-the-process"
    assert found.environ == dict(os.environ)
    assert found.environ is not os.environ


# --- the peek knows every setting the model factory reads (structurally: a new setting cannot be missed) ------


def _function(path: Path, name: str) -> ast.FunctionDef:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name)


def test_the_peek_reads_every_setting_the_model_factory_reads() -> None:
    """`server.assembly.model_factory` builds each turn's `ModelConfig` from `Settings` attributes; `peek_model`
    builds the early call's from the same settings read by name. Every attribute the factory reads must be read
    by the peek (by its setting's name; `environ` is the environment the peek merges), and both must fill the
    same `ModelConfig` fields (the reasoning effort is the turn's, not a setting)."""
    package = Path(__file__).resolve().parents[1] / "coder_agent"
    factory = _function(package / "server" / "assembly.py", "model_factory")
    read_by_factory = {
        node.attr
        for node in ast.walk(factory)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "settings"
    }
    peek_fn = _function(package / "prestart" / "settings_peek.py", "peek_model")
    read_by_peek = {
        node.args[1].value
        for node in ast.walk(peek_fn)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("_text", "_bounded")
        and len(node.args) > 1
        and isinstance(node.args[1], ast.Constant)
    }
    read_by_peek |= {"model", "environ"}  # `_session(raw, ...).model`, and `env` itself
    assert read_by_factory, "model_factory reads no setting: this test no longer looks at the right code"
    assert sorted(read_by_factory - read_by_peek) == []

    def config_fields(function: ast.FunctionDef) -> set[str]:
        [call] = [
            n for n in ast.walk(function) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "ModelConfig"
        ]
        return {keyword.arg for keyword in call.keywords if keyword.arg is not None}

    assert config_fields(factory) - {"reasoning_effort"} == config_fields(peek_fn)
