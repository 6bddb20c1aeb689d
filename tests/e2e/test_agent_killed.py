"""`kill -9` of the agent: nothing it started lives on — not a command's process group, not an MCP server.

The editor gives no terminal here (bare client), so the agent runs commands as its own process groups.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from pathlib import Path

import anyio
import pytest
from acp import PROTOCOL_VERSION
from acp.schema import McpServerStdio

from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.acp_client import RecordingClient, SpawnedAgent, spawn_agent
from tests.support.agent_env import FIRST_PROMPT_TIMEOUT, EnvFactory
from tests.support.driving import BackgroundPrompt
from tests.support.processes import alive, alive_in_group, read_fifo, wait_gone

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

SERVER = str(Path(__file__).resolve().parents[1] / "support" / "mcp_server_script.py")
WATCHDOG_MARK = b"trap '' INT HUP QUIT"  # the watchdog's command line (coder_agent/local/watchdog.py)
DEATH_DEADLINE = 10.0  # seconds for what the agent left to die after its SIGKILL (the watchdog's grace is 1 s)


def children_of(pid: int) -> dict[int, bytes]:
    """The live children of `pid` and their command lines."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == pid and fields[0] not in "ZX":
                    found[int(entry.name)] = (entry / "cmdline").read_bytes()
            except (OSError, IndexError):
                continue
    return found


async def open_session(agent: SpawnedAgent, workspace: Path, mcp_servers: list[McpServerStdio]) -> str:
    with anyio.fail_after(20):
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        return (await agent.conn.new_session(cwd=str(workspace), mcp_servers=mcp_servers)).session_id


async def test_a_killed_agent_leaves_no_process_of_its_commands_groups_and_its_watchdog_goes_too(
    srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path, tmp_path: Path
) -> None:
    ready = tmp_path / "ready.fifo"
    os.mkfifo(ready)
    # Ready a moment after it starts: the agent registers the group with its watchdog just after the spawn
    # returns, and a kill before that (seen under load: the shell ran first) would test nothing of the watchdog.
    command = f"sleep 300 & sleep 300 & sleep 1; echo $$ > {ready}; wait"
    srv.enqueue(Reply.tool_calls([tool_call("run_command", {"command": command})]))
    pgid: int | None = None
    try:
        async with (
            spawn_agent(agent_env(), client=RecordingClient("allow_once"), cwd=workspace) as agent,
            anyio.create_task_group() as tasks,
        ):
            session_id = await open_session(agent, workspace, [])
            tasks.start_soon(BackgroundPrompt(agent, session_id, "sleep twice").run)
            pgid = int(await read_fifo(ready, FIRST_PROMPT_TIMEOUT))
            members = alive_in_group(pgid)
            watchdogs = [pid for pid, cmdline in children_of(agent.proc.pid).items() if WATCHDOG_MARK in cmdline]
            assert len(members) == 3  # the shell and its two sleeps
            agent.proc.send_signal(signal.SIGKILL)
            assert await wait_gone(members, DEATH_DEADLINE) == []
            assert len(watchdogs) == 1 and await wait_gone(watchdogs, DEATH_DEADLINE) == []
            tasks.cancel_scope.cancel()
        assert alive_in_group(pgid) == []
    finally:
        if pgid is not None:  # without the fix the sleeps live on: do not leave them behind
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGKILL)


async def test_an_mcp_stdio_server_exits_when_the_agent_is_killed(
    srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path
) -> None:
    server = McpServerStdio(name="demo", command=sys.executable, args=[SERVER, "stdio", "--tag", "killed"], env=[])
    srv.enqueue(Reply.tool_calls([tool_call("mcp__demo__pid", {})]), Reply.text("ok"))
    async with spawn_agent(agent_env(CODER_AGENT_DEFAULT_MODE="bypass"), cwd=workspace) as agent:
        session_id = await open_session(agent, workspace, [server])
        with anyio.fail_after(FIRST_PROMPT_TIMEOUT):
            await BackgroundPrompt(agent, session_id, "your pid?").run()
        [answer] = [m["content"] for m in srv.requests[1].body["messages"] if m["role"] == "tool"]
        server_pid = int(answer)
        assert alive(server_pid)
        agent.proc.send_signal(signal.SIGKILL)
        assert await wait_gone([server_pid], DEATH_DEADLINE) == []
