"""`coder-agent login` as a line dialogue (here on plain streams; tests/e2e/test_terminal_login.py drives a pty)."""

from __future__ import annotations

import io
import tomllib
from pathlib import Path

import pytest

from coder_agent.cli.login_dialogue import run_dialogue
from coder_agent.cli.main import main
from coder_agent.config.keystore import KeyStore


def dialogue(config: Path, answers: str, **options: object) -> tuple[int, str]:
    out = io.StringIO()
    code = run_dialogue(config, io.StringIO(answers), out, where="file", **options)  # type: ignore[arg-type]
    return code, out.getvalue()


def no_server(prefix: str, base: str) -> list[str]:
    raise ConnectionRefusedError("connection refused")


def test_a_hosted_provider_after_a_local_server_drops_the_servers_address_and_key(tmp_path: Path) -> None:
    code, _ = dialogue(tmp_path, "9\nhttp://127.0.0.1:9/v1\nmy-model\nlocal-key-123\n", lister=no_server)
    assert code == 0
    assert tomllib.loads((tmp_path / "config.toml").read_text()) == {
        "model": "openai/my-model",
        "api_base": "http://127.0.0.1:9/v1",
    }
    assert KeyStore(tmp_path).load().keys == {"CODER_AGENT_API_KEY": "local-key-123"}

    code, said = dialogue(tmp_path, "1\nsk-ant-0123456789\n\n")
    assert code == 0 and "Logged in: model anthropic/claude-sonnet-4-5" in said
    # The Anthropic key must not go to the old server, nor the old server's key to Anthropic.
    assert tomllib.loads((tmp_path / "config.toml").read_text()) == {"model": "anthropic/claude-sonnet-4-5"}
    assert KeyStore(tmp_path).load().keys == {"ANTHROPIC_API_KEY": "sk-ant-0123456789"}


def test_unattended_with_provider_and_model_the_key_is_the_first_line(tmp_path: Path) -> None:
    code, _ = dialogue(tmp_path, "sk-or-0123456789\n", provider_id="openrouter", model="openrouter/x/y")
    assert code == 0
    assert KeyStore(tmp_path).load().keys == {"OPENROUTER_API_KEY": "sk-or-0123456789"}


def test_nothing_usable_given_is_abandoned_and_saves_nothing(tmp_path: Path) -> None:
    code, said = dialogue(tmp_path, "42\nx\n0\n")
    assert code == 1 and "nothing was saved" in said
    code, said = dialogue(tmp_path, "2\n\n\n\n")  # no key, three times
    assert code == 1 and not (tmp_path / "credentials.toml").exists() and not (tmp_path / "config.toml").exists()


@pytest.mark.parametrize("argv", [["login"], ["acp", "login"]])
def test_both_ways_an_editor_runs_the_login_reach_it(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CODER_AGENT_CONFIG_DIR", str(tmp_path))
    monkeypatch.setattr("sys.stdin", io.StringIO("sk-ant-0123456789\n\n"))
    with pytest.raises(SystemExit) as ended:
        main([*argv, "--provider", "anthropic"])
    assert ended.value.code == 0, capsys.readouterr().out
    assert KeyStore(tmp_path).names() == ["ANTHROPIC_API_KEY"]


def test_store_keyring_without_a_keyring_says_so_before_the_key_is_typed(tmp_path: Path) -> None:
    """Before: a traceback, after the key was typed."""
    out = io.StringIO()
    code = run_dialogue(tmp_path, io.StringIO("1\nsk-ant-0123456789\n\n"), out, where="keyring")
    assert code == 1
    assert out.getvalue() == (
        "Login abandoned (no OS keyring is available (install the `keyring` package and a backend); or keep the "
        "key in a file of yours: --store file): nothing was saved.\n"
    )
    assert not (tmp_path / "credentials.toml").exists()


class _Interrupted(io.StringIO):
    """A terminal whose user presses Ctrl-C at the first question."""

    def readline(self, size: int | None = -1) -> str:
        raise KeyboardInterrupt


def test_ctrl_c_says_the_login_was_interrupted(tmp_path: Path) -> None:
    """Before: "Login abandoned ():"."""
    out = io.StringIO()
    assert run_dialogue(tmp_path, _Interrupted(), out, where="file") == 1
    assert out.getvalue().endswith("\nLogin abandoned (interrupted): nothing was saved.\n")
