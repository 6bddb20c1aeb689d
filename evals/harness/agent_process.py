"""`coder-agent acp` as a subprocess, spoken to through a JSON-RPC `Connection` over its tapped stdio.

The agent runs in its own process group; on the way out its stdin is closed (the editor's way to end it),
it gets a few seconds to exit, then the group is killed. Its stderr goes to a file in the trial folder.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.abc

from coder_agent.acp.jsonrpc import Connection, Dispatcher

from .procs import kill_group
from .wire import TapReceive, TapSend, WireLog

SHUTDOWN_TIMEOUT = 5.0


def agent_command() -> list[str]:
    return [sys.executable, "-m", "coder_agent", "acp"]


@dataclass
class AgentProcess:
    process: anyio.abc.Process
    connection: Connection
    exited: anyio.Event  # the agent's stdout ended (it exited, or closed it)
    killed: bool = False  # it did not exit by itself once its stdin was closed

    @property
    def running(self) -> bool:
        return not self.exited.is_set()


@asynccontextmanager
async def launch_agent(
    dispatcher: Dispatcher,
    wire: WireLog,
    *,
    env: Mapping[str, str],
    cwd: Path,
    stderr_path: Path,
    command: Sequence[str] | None = None,
) -> AsyncIterator[AgentProcess]:
    with stderr_path.open("wb") as stderr:
        process = await anyio.open_process(
            list(command or agent_command()), env=dict(env), cwd=cwd, stderr=stderr, start_new_session=True
        )
    assert process.stdin is not None and process.stdout is not None
    connection = Connection(TapReceive(process.stdout, wire), TapSend(process.stdin, wire), dispatcher)
    agent = AgentProcess(process, connection, anyio.Event())

    async def serve() -> None:
        try:
            await connection.serve()
        finally:
            agent.exited.set()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(serve)
            try:
                yield agent
            finally:
                with anyio.CancelScope(shield=True):
                    agent.killed = await _stop(process)
                    tg.cancel_scope.deadline = anyio.current_time() + SHUTDOWN_TIMEOUT
    finally:
        with anyio.CancelScope(shield=True):
            kill_group(process)
            await process.aclose()


async def _stop(process: anyio.abc.Process) -> bool:
    """Close stdin, give the agent SHUTDOWN_TIMEOUT seconds to exit, else kill its group; True if killed."""
    assert process.stdin is not None
    try:
        await process.stdin.aclose()
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        pass
    with anyio.move_on_after(SHUTDOWN_TIMEOUT):
        await process.wait()
    killed = process.returncode is None
    kill_group(process)  # anything it left running goes too
    with anyio.move_on_after(SHUTDOWN_TIMEOUT):
        await process.wait()
    return killed
