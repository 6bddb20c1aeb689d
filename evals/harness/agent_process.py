"""`coder-agent acp` as a subprocess, its stdio tapped: the one way the evals, the tests and the benchmarks start
and stop the agent.

`start_agent` runs it in its own process group with its stderr in a file, and gives its stdout and stdin as byte
streams; every byte that crosses is shown to the `WireLog` (transcript and ACP schema check) first. On the way
out its stdin is closed (the editor's way to end it), it gets a few seconds to exit, else it is killed; what it
wrote is read to its end; then its group is killed, so nothing it left running lives on.

`launch_agent` speaks JSON-RPC over it with our `Connection` (the eval harness, the benchmarks); the tests put
the official SDK's client on the same streams (tests/support/acp_client.py).
"""

from __future__ import annotations

import contextlib
import math
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from coder_agent.acp.jsonrpc import Connection, Dispatcher

from .procs import kill_group
from .wire import WireLog

SHUTDOWN_TIMEOUT = 5.0


def agent_command(args: Sequence[str] = ("acp",)) -> list[str]:
    return [sys.executable, "-m", "coder_agent", *args]


class _Stdout(anyio.abc.ByteReceiveStream):
    """What the agent wrote, as the pump read it (and showed it to the wire log); EOF when its stdout ended."""

    def __init__(self, chunks: MemoryObjectReceiveStream[bytes]) -> None:
        self._chunks = chunks

    async def receive(self, max_bytes: int = 65536) -> bytes:
        try:
            return await self._chunks.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise anyio.EndOfStream from None

    async def aclose(self) -> None:
        self._chunks.close()


class _Stdin(anyio.abc.ByteSendStream):
    """The agent's stdin; each write is shown to the wire log before it is sent."""

    def __init__(self, process: anyio.abc.Process, wire: WireLog) -> None:
        assert process.stdin is not None
        self._stdin = process.stdin
        self._wire = wire

    async def send(self, item: bytes) -> None:
        self._wire.client_sent(item)
        await self._stdin.send(item)

    async def aclose(self) -> None:
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            await self._stdin.aclose()


@dataclass
class AgentPipes:
    """The running agent: read `stdout` to its end, write to `stdin` (closing it ends the agent)."""

    process: anyio.abc.Process
    stdout: anyio.abc.ByteReceiveStream
    stdin: anyio.abc.ByteSendStream
    wire: WireLog
    stderr_path: Path
    shutdown_timeout: float = SHUTDOWN_TIMEOUT
    ended: anyio.Event = field(default_factory=anyio.Event)  # its stdout reached EOF
    killed: bool = False  # it did not exit by itself within the shutdown timeout once its stdin was closed
    _stopped: bool = False

    @property
    def stdout_ended(self) -> bool:
        """Whether its stdout reached EOF before its group was killed (else a child of it still held it)."""
        return self.ended.is_set()

    async def stop(self) -> None:
        """Close stdin, give the agent `shutdown_timeout` seconds to exit, else kill it; then wait (as long
        again, at most) for the end of its stdout. Once only; shielded from cancellation."""
        if self._stopped:
            return
        self._stopped = True
        with anyio.CancelScope(shield=True):
            await self.stdin.aclose()
            with anyio.move_on_after(self.shutdown_timeout):
                await self.process.wait()
            self.killed = self.process.returncode is None
            if self.killed:
                self.process.kill()
                with anyio.move_on_after(self.shutdown_timeout):
                    await self.process.wait()
            with anyio.move_on_after(self.shutdown_timeout):
                await self.ended.wait()


async def _pump(
    process: anyio.abc.Process, wire: WireLog, sink: MemoryObjectSendStream[bytes], ended: anyio.Event
) -> None:
    assert process.stdout is not None
    with sink:
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            async for chunk in process.stdout:
                wire.agent_sent(chunk)
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    sink.send_nowait(chunk)
            ended.set()
        wire.agent_closed()


@asynccontextmanager
async def start_agent(
    wire: WireLog,
    *,
    env: Mapping[str, str],
    cwd: Path | str,
    stderr_path: Path,
    command: Sequence[str] | None = None,
    shutdown_timeout: float = SHUTDOWN_TIMEOUT,
) -> AsyncIterator[AgentPipes]:
    """Start the agent (or `command`) and, on the way out, stop it as described above; bounded throughout."""
    with stderr_path.open("wb") as stderr:
        process = await anyio.open_process(
            list(command or agent_command()), env=dict(env), cwd=cwd, stderr=stderr, start_new_session=True
        )
    sink, chunks = anyio.create_memory_object_stream[bytes](math.inf)
    pipes = AgentPipes(process, _Stdout(chunks), _Stdin(process, wire), wire, stderr_path, shutdown_timeout)
    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_pump, process, wire, sink, pipes.ended)
            try:
                yield pipes
            finally:
                await pipes.stop()
                tasks.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            kill_group(process)  # anything it left running goes too
            await process.aclose()
            chunks.close()


@dataclass
class AgentProcess:
    pipes: AgentPipes
    connection: Connection
    exited: anyio.Event  # the agent's stdout ended (it exited, or closed it)

    @property
    def process(self) -> anyio.abc.Process:
        return self.pipes.process

    @property
    def killed(self) -> bool:
        return self.pipes.killed

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
    """The agent under our JSON-RPC `Connection`, whose requests `dispatcher` answers."""
    async with start_agent(wire, env=env, cwd=cwd, stderr_path=stderr_path, command=command) as pipes:
        connection = Connection(pipes.stdout, pipes.stdin, dispatcher)
        agent = AgentProcess(pipes, connection, anyio.Event())

        async def serve() -> None:
            try:
                await connection.serve()
            finally:
                agent.exited.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(serve)
            try:
                yield agent
            finally:
                await pipes.stop()
                with anyio.CancelScope(shield=True), anyio.move_on_after(pipes.shutdown_timeout):
                    await agent.exited.wait()  # serve() reads the rest of what the agent wrote
                tg.cancel_scope.cancel()
