"""`coder-agent acp` outside an editor: its `--help`, and the one line it writes when started in a terminal."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import anyio
import pytest
from anyio.abc import ByteReceiveStream

from coder_agent.cli.main import main
from coder_agent.config.settings import PREFIX, Settings
from tests.support.acp_client import agent_command, base_env
from tests.support.acp_schema import AgentMessageValidator
from tests.support.driving import REPO_ROOT

INITIALIZE = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}\n'
HINT = "this is an Agent Client Protocol server that editors launch"


@pytest.fixture
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user with no CODER_AGENT_* settings, in an empty folder, on a terminal wide enough not to wrap."""
    for key in [key for key in os.environ if key.startswith(PREFIX) or key in ("XDG_DATA_HOME", "XDG_CONFIG_HOME")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.setenv("COLUMNS", "300")
    monkeypatch.chdir(tmp_path)
    return tmp_path / "user"


def acp_help(capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exited:
        main(["acp", "--help"])
    assert exited.value.code == 0
    out, err = capsys.readouterr()
    assert err == ""
    return out


def test_acp_help_says_what_the_command_is_for_and_lists_every_setting_with_its_default(
    user: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shown = acp_help(capsys)
    assert "Agent Client Protocol" in shown and "Editors" in shown and "coder-agent run" in shown
    lines = {line.split()[0]: line for line in shown.splitlines() if line.startswith(f"  {PREFIX}")}
    assert sorted(lines) == sorted(PREFIX + name.upper() for name in Settings.model_fields)
    for name, field in Settings.model_fields.items():
        assert (field.description or "").rstrip(".") in lines[PREFIX + name.upper()]
    assert lines["CODER_AGENT_REQUEST_TIMEOUT"].endswith("(default: 120)")
    assert lines["CODER_AGENT_RETRY_BASE_DELAY"].endswith("(default: 1)")
    assert lines["CODER_AGENT_LOG_LEVEL"].endswith("(default: INFO)")
    assert lines["CODER_AGENT_MODEL"].endswith("(default: unset)")
    assert lines["CODER_AGENT_MODELS"].endswith("comma-separated (default: unset)")
    assert "(default: $XDG_DATA_HOME/coder-agent, else ~/.local/share/coder-agent)" in lines["CODER_AGENT_HOME"]


@pytest.mark.parametrize("where", ["default", "xdg", "environment", "dotenv"])
def test_acp_help_shows_the_config_and_log_files_of_this_user_and_creates_nothing(
    user: Path, where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = {
        "default": user / ".local" / "share" / "coder-agent",
        "xdg": tmp_path / "xdg" / "coder-agent",
        "environment": tmp_path / "from-env",
        "dotenv": tmp_path / "from-dotenv",
    }[where]
    if where == "xdg":
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    elif where == "environment":
        monkeypatch.setenv("CODER_AGENT_HOME", str(home))
    elif where == "dotenv":  # the user's own .env, in the config folder (a .env in the start folder is never read)
        config = tmp_path / "config"
        (config / "coder-agent").mkdir(parents=True)
        (config / "coder-agent" / ".env").write_text(f"CODER_AGENT_HOME={home}\n")
        monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    shown = acp_help(capsys)
    config = (tmp_path / "config" if where == "dotenv" else user / ".config") / "coder-agent"
    assert re.search(rf"config file +{re.escape(str(config / 'config.toml'))} ", shown)
    assert re.search(rf"old config +{re.escape(str(home / 'config.toml'))} \(\$CODER_AGENT_HOME/config\.toml\)", shown)
    log_file = home / "logs" / "coder-agent.log"
    assert re.search(rf"log file +{re.escape(str(log_file))} \(\$CODER_AGENT_HOME/logs/coder-agent\.log\)", shown)
    assert not home.exists() and not user.exists()


def test_acp_with_an_unknown_argument_is_a_usage_error(user: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["acp", "--verbose"])
    assert exited.value.code == 2
    assert "usage: coder-agent acp [-h]" in capsys.readouterr().err


def test_the_top_level_help_points_at_acp_help(user: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    assert "coder-agent acp --help" in capsys.readouterr().out


# ---- the real process -----------------------------------------------------------------------------------------


def agent_env(tmp_path: Path) -> dict[str, str]:
    return {**base_env(), "PYTHONPATH": str(REPO_ROOT), "CODER_AGENT_HOME": str(tmp_path / "home")}


async def read_line(stream: ByteReceiveStream) -> bytes:
    data = b""
    while b"\n" not in data:
        data += await stream.receive()
    return data


@pytest.mark.e2e
def test_coder_agent_acp_help_exits_0_as_a_process(tmp_path: Path) -> None:
    done = subprocess.run(agent_command(["acp", "--help"]), env=agent_env(tmp_path), capture_output=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert b"CODER_AGENT_MODEL" in done.stdout and done.stderr == b""


@pytest.mark.e2e
@pytest.mark.anyio
async def test_started_in_a_terminal_acp_says_on_stderr_what_it_is_and_still_answers_initialize(
    tmp_path: Path,
) -> None:
    master, slave = os.openpty()
    validator = AgentMessageValidator()
    try:
        command = agent_command(["acp"])
        process = await anyio.open_process(command, stdin=slave, env=agent_env(tmp_path), cwd=tmp_path)
        os.close(slave)
        async with process:
            assert process.stdout is not None and process.stderr is not None
            try:
                with anyio.fail_after(20):
                    first = await read_line(process.stderr)
                    os.write(master, INITIALIZE)  # typed into the terminal
                    validator.feed_client(INITIALIZE)
                    replies = validator.feed_agent(await read_line(process.stdout))
            finally:
                process.terminate()
    finally:
        os.close(master)
    hint = first.decode()
    assert hint.count("\n") == 1 and hint.startswith(f"coder-agent acp: {HINT}")
    assert "coder-agent run" in hint and "coder-agent acp --help" in hint
    assert validator.violations == []
    assert replies[0] is not None and replies[0]["result"]["protocolVersion"] == 1


@pytest.mark.e2e
@pytest.mark.anyio
async def test_launched_through_a_pipe_acp_writes_no_terminal_hint(tmp_path: Path) -> None:
    listing = b'{"jsonrpc":"2.0","id":2,"method":"session/list","params":{}}\n'  # for the full agent to answer
    with anyio.fail_after(20):
        done = await anyio.run_process(
            agent_command(["acp"]), input=INITIALIZE + listing, env=agent_env(tmp_path), check=False
        )
    assert done.returncode == 0
    assert b'"protocolVersion":1' in done.stdout and b'"sessions":[]' in done.stdout
    assert HINT.encode() not in done.stderr
    assert b"speaking ACP on stdio" in done.stderr  # stderr was read: the agent did start
