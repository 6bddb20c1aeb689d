"""Ctrl-C: the turn is cancelled through the agent, the command's process group dies, the run exits 130."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import anyio
import pytest

from coder_agent.agent.shell import live_members
from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from coder_agent.store.sqlite import SqliteSessionStore
from tests.local.helpers import CLI, RUN_TIMEOUT, EnvFactory

pytestmark = pytest.mark.anyio

EXIT_DEADLINE = 5.0  # seconds from Ctrl-C to the process's exit


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
