"""Ctrl-C: the turn is cancelled through the agent, the command's process group dies, the run exits 130."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import struct
import subprocess
import sys
import termios
from pathlib import Path

import anyio
import pytest

from coder_agent.local.process_groups import live_members
from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from coder_agent.store.sqlite import SqliteSessionStore
from tests.support.run_helpers import CLI, RUN_TIMEOUT, EnvFactory
from tests.support.screen import Screen

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

EXIT_DEADLINE = 5.0  # seconds from Ctrl-C to the process's exit
# Runs what follows with the terminal on fd 0 as its controlling terminal (and on fds 1 and 2), as a shell does.
ON_TERMINAL = "import os, sys; os.login_tty(0); os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"


async def test_ctrl_c_during_a_long_command_kills_it_stores_the_turn_and_exits_130(
    srv: ScriptedModelServer, cli_env: EnvFactory, workspace: Path, home: Path
) -> None:
    os.mkfifo(workspace / "ready")
    command = tool_call("run_command", {"command": "echo $$ > ready; sleep 60; echo never"})
    srv.enqueue(Reply.tool_calls([command]))
    args = [*CLI, "--yes", "--json", "--prompt", "wait a minute"]
    ready = os.open(workspace / "ready", os.O_RDONLY | os.O_NONBLOCK)
    process = await anyio.open_process(args, stdin=subprocess.DEVNULL, env=cli_env(), cwd=workspace)
    async with process:
        assert process.stdout is not None
        try:
            with anyio.fail_after(RUN_TIMEOUT):  # until the command's shell says who it is
                await anyio.wait_readable(ready)
                pgid = int(os.read(ready, 64).decode().strip())
        finally:
            os.close(ready)
        assert live_members(pgid)
        started = anyio.current_time()
        process.send_signal(signal.SIGINT)
        with anyio.fail_after(EXIT_DEADLINE):
            code = await process.wait()
        elapsed = anyio.current_time() - started
        output = b""
        with anyio.fail_after(5):
            async for chunk in process.stdout:
                output += chunk
    assert code == 130
    assert elapsed < EXIT_DEADLINE
    assert live_members(pgid) == []
    result = json.loads(output.splitlines()[-1])
    assert result["type"] == "result"
    assert result["stopReason"] == "cancelled"
    store = SqliteSessionStore(home / "sessions.db")
    try:
        messages = [json.loads(body) for body in store.messages(result["sessionId"])]
    finally:
        store.close()
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
    assert "Cancelled" in messages[-1]["content"]


async def test_ctrl_c_typed_in_a_terminal_during_streamed_text_leaves_that_text_on_the_screen_once(
    srv: ScriptedModelServer, cli_env: EnvFactory, workspace: Path
) -> None:
    srv.enqueue(
        Reply.stall(60, after_text=["Hello ", "**world**, this is ", "streamed.\n\nSecond ", "paragraph here."])
    )
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    command = [sys.executable, "-c", ON_TERMINAL, *CLI[1:], "--prompt", "say hello"]
    env = cli_env(TERM="xterm-256color", NO_COLOR=None)
    shown = b""
    try:
        process = await anyio.open_process(command, stdin=slave, stdout=None, stderr=None, env=env, cwd=workspace)
        os.close(slave)
        slave = -1
        async with process:
            with anyio.fail_after(RUN_TIMEOUT):  # until the whole text is on the screen
                while b"paragraph here." not in shown:
                    await anyio.wait_readable(master)
                    shown += os.read(master, 65536)
            os.write(master, b"\x03")  # Ctrl-C, typed: the terminal sends SIGINT and echoes ^C
            with anyio.fail_after(EXIT_DEADLINE):
                while True:
                    await anyio.wait_readable(master)
                    try:
                        chunk = os.read(master, 65536)
                    except OSError:  # EIO: the terminal's last user has exited
                        break
                    if not chunk:
                        break
                    shown += chunk
                code = await process.wait()
    finally:
        os.close(master)
        if slave != -1:
            os.close(slave)
    assert code == 130
    screen = Screen(80)
    screen.feed(shown.decode())
    lines = screen.lines()
    assert lines[:4] == [
        "Cancelling… (Ctrl-C again to quit at once)",
        "Hello world, this is streamed.",
        "",
        "Second paragraph here.",
    ], lines
    assert lines[4].startswith("── cancelled · ") and lines[5].startswith("   session sess_"), lines
    assert len(lines) == 6, lines
