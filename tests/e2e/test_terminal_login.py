"""The terminal login, as a client that opted in runs it: the advertised args and env, in a real pty.

The whole flow: a prompt without a login answers -32000; the client runs the agent's command with the terminal
method's args in a terminal, the user picks a provider and pastes a key (not echoed); exit 0; the client starts
the agent again and the prompt goes to the model with that key, which is in neither the sessions nor the logs.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import stat
import subprocess
import termios
import time
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest

from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.acp_client import RawAgent, agent_command, base_env, raw_agent
from tests.support.agent_env import FIRST_PROMPT_TIMEOUT, EnvFactory, request

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

KEY = "sk-pasted-in-the-terminal-0123456789"
STEP_TIMEOUT = 20.0


def _own_the_terminal() -> None:
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)  # the pty is the session's terminal, as in an editor's terminal


class Terminal:
    """A process in a pseudo-terminal, driven as a user would: wait for a prompt, type a line."""

    def __init__(self, command: Sequence[str], env: Mapping[str, str], cwd: Path) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            list(command),
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
            preexec_fn=_own_the_terminal,
        )
        os.close(slave)
        self.screen = b""

    def expect(self, text: str, timeout: float = STEP_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while text.encode() not in self.screen:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {text!r} on the terminal; it shows:\n{self.screen.decode(errors='replace')}")
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 4096)
                except OSError:  # the process is gone and the pty closed
                    chunk = b""
                if not chunk:
                    raise AssertionError(
                        f"the terminal closed before {text!r}:\n{self.screen.decode(errors='replace')}"
                    )
                self.screen += chunk

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def finish(self, timeout: float = STEP_TIMEOUT) -> int:
        try:
            code = self.proc.wait(timeout)
        finally:
            self.drain()
            os.close(self.master)
        return code

    def drain(self) -> None:
        while select.select([self.master], [], [], 0)[0]:
            try:
                chunk = os.read(self.master, 4096)
            except OSError:
                return
            if not chunk:
                return
            self.screen += chunk


async def terminal_method(env: dict[str, str], cwd: Path) -> dict[str, Any]:
    """The terminal auth method the agent advertises to a client that opted in."""
    async with raw_agent(env, cwd=cwd) as agent:
        capabilities = {"auth": {"terminal": True}, "fs": {"readTextFile": False}}
        await agent.send_json(request(0, "initialize", {"protocolVersion": 1, "clientCapabilities": capabilities}))
        reply = await agent.read_message()
    [method] = [m for m in reply["result"]["authMethods"] if m.get("type") == "terminal"]
    return method


def login_terminal(method: dict[str, Any], env: dict[str, str], cwd: Path) -> Terminal:
    """What the client does: the configured command (`coder-agent acp`) plus the method's args, its env on top."""
    command = [*agent_command(("acp",)), *method.get("args", [])]
    return Terminal(command, {**base_env(), **env, **method.get("env", {}), "TERM": "xterm"}, cwd)


async def prompt(agent: RawAgent, cwd: Path) -> dict[str, Any]:
    await agent.send_json(request(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}}))
    await agent.read_message()
    await agent.send_json(request(2, "session/new", {"cwd": str(cwd), "mcpServers": []}))
    session_id = (await agent.read_message())["result"]["sessionId"]
    text = [{"type": "text", "text": "hello"}]
    await agent.send_json(request(3, "session/prompt", {"sessionId": session_id, "prompt": text}))
    while True:
        message = await agent.read_message(FIRST_PROMPT_TIMEOUT)
        if message.get("id") == 3:
            return message


def private_bytes(folder: Path) -> bytes:
    return b"".join(path.read_bytes() for path in folder.rglob("*") if path.is_file())


async def test_a_client_with_terminal_auth_logs_in_through_a_real_terminal_and_then_prompts(
    srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path, tmp_path: Path
) -> None:
    # What a registry install gives: no model, no key; the editor's env only says where OpenAI is (the test's).
    env = agent_env(
        CODER_AGENT_MODEL=None, CODER_AGENT_API_KEY=None, CODER_AGENT_API_BASE=None, OPENAI_BASE_URL=srv.url
    )
    async with raw_agent(env, cwd=workspace) as before:
        refused = await prompt(before, workspace)
    assert refused["error"]["code"] == -32000 and "coder-agent login" in refused["error"]["message"]

    method = await terminal_method(env, workspace)
    assert method["args"] == ["login"]

    def log_in() -> tuple[int, str]:
        terminal = login_terminal(method, env, workspace)
        terminal.expect("Provider [1-10]: ")
        terminal.type("2\r")  # OpenAI
        terminal.expect("(OPENAI_API_KEY; not shown): ")
        terminal.type(KEY + "\r")
        terminal.expect("Model [")
        terminal.type("scripted\r")
        terminal.expect("Logged in: model openai/scripted")
        return terminal.finish(), terminal.screen.decode(errors="replace")

    with anyio.fail_after(2 * STEP_TIMEOUT):
        code, screen = await anyio.to_thread.run_sync(log_in)
    assert code == 0, screen
    assert KEY not in screen  # typed with echo off
    config = Path(env["XDG_CONFIG_HOME"]) / "coder-agent"
    saved = tomllib.loads((config / "credentials.toml").read_text())
    assert saved["keys"] == {"OPENAI_API_KEY": KEY}
    assert stat.S_IMODE((config / "credentials.toml").stat().st_mode) == 0o600
    assert stat.S_IMODE(config.stat().st_mode) == 0o700
    assert tomllib.loads((config / "config.toml").read_text())["model"] == "openai/scripted"

    srv.enqueue(Reply.text("Logged in and answering."))
    async with raw_agent(env, cwd=workspace) as after:  # the client reconnects
        done = await prompt(after, workspace)
    assert done["result"]["stopReason"] == "end_turn"
    assert [r.headers["authorization"] for r in srv.requests] == [f"Bearer {KEY}"]
    assert KEY.encode() not in private_bytes(Path(env["CODER_AGENT_HOME"]))  # sessions.db, logs


async def test_a_local_server_login_lists_its_models_in_the_terminal(
    srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path
) -> None:
    env = agent_env(CODER_AGENT_MODEL=None, CODER_AGENT_API_KEY=None, CODER_AGENT_API_BASE=None)
    method = await terminal_method(env, workspace)

    def log_in() -> tuple[int, str]:
        terminal = login_terminal(method, env, workspace)
        terminal.expect("Provider [1-10]: ")
        terminal.type("9\r")  # a local OpenAI-compatible server
        terminal.expect("Server address [")
        terminal.type(srv.url + "\r")
        terminal.expect("1) scripted")
        terminal.expect("Enter for 1]: ")
        terminal.type("\r")
        terminal.expect("not shown): ")
        terminal.type("\r")  # the server checks no key
        terminal.expect("Logged in: model openai/scripted at")
        return terminal.finish(), terminal.screen.decode(errors="replace")

    with anyio.fail_after(2 * STEP_TIMEOUT):
        code, screen = await anyio.to_thread.run_sync(log_in)
    assert code == 0, screen
    config = tomllib.loads((Path(env["XDG_CONFIG_HOME"]) / "coder-agent" / "config.toml").read_text())
    assert config == {"model": "openai/scripted", "api_base": srv.url}

    srv.enqueue(Reply.text("Local and answering."))
    async with raw_agent(env, cwd=workspace) as after:
        done = await prompt(after, workspace)
    assert done["result"]["stopReason"] == "end_turn"


@pytest.mark.parametrize("how", ["end of input", "ctrl-c"])
async def test_an_abandoned_login_exits_non_zero_and_saves_nothing(
    agent_env: EnvFactory, workspace: Path, how: str
) -> None:
    env = agent_env(CODER_AGENT_MODEL=None, CODER_AGENT_API_KEY=None)
    method = await terminal_method(env, workspace)

    def abandon() -> tuple[int, str]:
        terminal = login_terminal(method, env, workspace)
        terminal.expect("Provider [1-10]: ")
        terminal.type("1\r")
        terminal.expect("not shown): ")
        terminal.type("\x04" if how == "end of input" else "\x03")
        terminal.expect("nothing was saved")
        return terminal.finish(), terminal.screen.decode(errors="replace")

    with anyio.fail_after(2 * STEP_TIMEOUT):
        code, screen = await anyio.to_thread.run_sync(abandon)
    assert code != 0, screen
    assert code != -signal.SIGINT  # the login handled it and said so
    assert not (Path(env["XDG_CONFIG_HOME"]) / "coder-agent" / "credentials.toml").exists()
