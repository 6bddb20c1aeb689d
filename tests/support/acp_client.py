"""The editor side of every end-to-end test: spawn the agent, drive it, check every line it writes.

``spawn_agent`` drives the process with the official SDK's ``ClientSideConnection``; ``raw_agent`` gives plain
pipes for bad-input tests. Both tee the agent's raw stdout through ``AgentMessageValidator`` (and show it the
client's lines, so responses can be matched to their requests), and both fail the test on exit if any line the
agent wrote breaks framing or the ACP v1 schema.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import anyio
from acp.client.connection import ClientSideConnection
from anyio.abc import Process
from anyio.streams.memory import MemoryObjectSendStream

from tests.support.acp_schema import AgentMessageValidator
from tests.support.recording_client import PermissionPolicy, PermissionRequest, RecordingClient

__all__ = [
    "PermissionPolicy",
    "PermissionRequest",
    "RawAgent",
    "RecordingClient",
    "SpawnedAgent",
    "agent_command",
    "base_env",
    "raw_agent",
    "spawn_agent",
]

_INHERITED_ENV = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "SYSTEMROOT")
# tests/conftest.py sets these so litellm stays offline; a subprocess only gets what we pass on.
_OFFLINE_ENV = ("LITELLM_LOCAL_MODEL_COST_MAP", "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS", "HF_HUB_OFFLINE")


def base_env() -> dict[str, str]:
    """The minimal environment the agent gets before the test's own env is merged over it."""
    return {key: os.environ[key] for key in (*_INHERITED_ENV, *_OFFLINE_ENV) if key in os.environ}


def agent_command(args: Sequence[str] = ("acp",)) -> list[str]:
    return [sys.executable, "-m", "coder_agent", *args]


class _StderrLog:
    """The agent's stderr, in a temp file (a pipe nobody reads could fill up and block the agent)."""

    def __init__(self) -> None:
        fd, name = tempfile.mkstemp(prefix="agent-stderr-", suffix=".log")
        self.file = os.fdopen(fd, "wb")
        self.path = Path(name)
        self._final: str | None = None

    def text(self) -> str:
        return self._final if self._final is not None else self.path.read_text("utf-8", errors="replace")

    def close(self) -> None:
        self._final = self.text()
        self.file.close()
        self.path.unlink(missing_ok=True)


class AgentIO:
    """What both harnesses share: the process, its stderr, and the checker that saw all of its stdout."""

    def __init__(self, proc: Process, stderr: _StderrLog) -> None:
        self.proc = proc
        self.validator = AgentMessageValidator()
        self.stdout_ended = False
        self.killed = False  # the agent ignored stdin EOF for shutdown_timeout seconds
        self._stderr = stderr

    @property
    def agent_lines(self) -> list[bytes]:
        return self.validator.agent_lines

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.validator.messages

    def stderr_text(self) -> str:
        return self._stderr.text()

    def debug_report(self) -> str:
        tail = self.stderr_text()[-4000:]
        return f"{self.validator.report()}\n--- agent stderr (last 4000 chars) ---\n{tail}"

    def check(self) -> None:
        if not self.stdout_ended:
            raise AssertionError(f"agent stdout never reached EOF (a child still holds it?)\n{self.debug_report()}")
        if self.validator.violations:
            raise AssertionError(self.debug_report())

    async def pump_stdout(
        self, on_chunk: Callable[[bytes, list[dict[str, Any] | None]], None], on_eof: Callable[[], None]
    ) -> None:
        """Check every byte the agent writes, then hand it on (with the parsed lines); runs until EOF."""
        assert self.proc.stdout is not None
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            async for chunk in self.proc.stdout:
                on_chunk(chunk, self.validator.feed_agent(chunk))
            self.stdout_ended = True
        self.validator.end_agent()
        on_eof()


AgentT = TypeVar("AgentT", bound=AgentIO)


async def _stop(proc: Process, timeout: float) -> bool:
    """Close stdin, give the agent `timeout` seconds to exit, else kill it; True if it had to be killed."""
    with anyio.CancelScope(shield=True):  # runs to the end even when the test was cancelled
        if proc.stdin is not None:
            with contextlib.suppress(Exception):
                await proc.stdin.aclose()
        with anyio.move_on_after(timeout):
            await proc.wait()
        killed = proc.returncode is None
        if killed:
            proc.kill()
            with anyio.fail_after(timeout):
                await proc.wait()
    return killed


@asynccontextmanager
async def _launch(
    make: Callable[[Process, _StderrLog], AgentT],
    command: Sequence[str],
    env: Mapping[str, str] | None,
    cwd: str | os.PathLike[str] | None,
    shutdown_timeout: float,
) -> AsyncIterator[AgentT]:
    """Start the process; afterwards stop it, and check all it wrote (or add the report to the test's error)."""
    stderr = _StderrLog()
    proc: Process | None = None
    try:
        proc = await anyio.open_process(list(command), env={**base_env(), **(env or {})}, cwd=cwd, stderr=stderr.file)
        agent = make(proc, stderr)
        try:
            yield agent
        except Exception as exc:
            exc.add_note(agent.debug_report())
            raise
    finally:
        if proc is not None:
            await _stop(proc, shutdown_timeout)
            with anyio.CancelScope(shield=True):
                await proc.aclose()
        stderr.close()
    agent.check()


@contextlib.contextmanager
def _single_error() -> Iterator[None]:
    """Let the test see its own exception, not the one-member ExceptionGroup a task group wraps it in."""
    try:
        yield
    except BaseExceptionGroup as group:
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise


class _TeeTransport(asyncio.WriteTransport):
    """Under the SDK's StreamWriter: shows each write to the checker, then queues it for the agent's stdin."""

    def __init__(self, sink: MemoryObjectSendStream[bytes], validator: AgentMessageValidator) -> None:
        super().__init__()
        self._sink = sink
        self._validator = validator
        self._closed = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self._validator.feed_client(bytes(data))
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._sink.send_nowait(bytes(data))

    def is_closing(self) -> bool:
        return self._closed

    def close(self) -> None:
        self._closed = True
        self._sink.close()


class SpawnedAgent(AgentIO):
    """The agent under the official SDK's ClientSideConnection (``conn``), answered by ``client``."""

    def __init__(self, proc: Process, stderr: _StderrLog, client: RecordingClient) -> None:
        super().__init__(proc, stderr)
        self.client = client
        self._from_agent = asyncio.StreamReader()
        sink, self._source = anyio.create_memory_object_stream[bytes](math.inf)
        self._transport = _TeeTransport(sink, self.validator)
        protocol = asyncio.streams.FlowControlMixin()  # gives the StreamWriter its drain()
        writer = asyncio.StreamWriter(self._transport, protocol, None, asyncio.get_running_loop())
        self.conn = ClientSideConnection(client, writer, self._from_agent)
        self.stdin_flushed = anyio.Event()

    def _on_stdout(self, chunk: bytes, parsed: list[dict[str, Any] | None]) -> None:
        self._from_agent.feed_data(chunk)  # the SDK does its own framing, exactly as on a real pipe

    async def pump_stdin(self) -> None:
        """Copy what the SDK writes to the agent's stdin; once the transport closes, close stdin (EOF)."""
        assert self.proc.stdin is not None
        try:
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                async with self._source:
                    async for data in self._source:
                        await self.proc.stdin.send(data)
                await self.proc.stdin.aclose()
        finally:
            self.stdin_flushed.set()

    async def shut_down(self, timeout: float) -> None:
        with anyio.CancelScope(shield=True):
            await self.conn.close()  # flushes what the SDK has queued, then stops its tasks
            self._transport.close()
            with anyio.move_on_after(timeout):
                await self.stdin_flushed.wait()
            self.killed = await _stop(self.proc, timeout)


@asynccontextmanager
async def spawn_agent(
    env: Mapping[str, str] | None = None,
    *,
    client: RecordingClient | None = None,
    cwd: str | os.PathLike[str] | None = None,
    args: Sequence[str] = ("acp",),
    command: Sequence[str] | None = None,
    timeout: float = 60.0,
    shutdown_timeout: float = 5.0,
) -> AsyncIterator[SpawnedAgent]:
    """Run the agent (or `command`) under the SDK's client; on exit stop it, then check all it wrote.

    `timeout` bounds the whole ``async with`` body; `shutdown_timeout` bounds each shutdown step.
    """

    def make(proc: Process, stderr: _StderrLog) -> SpawnedAgent:
        return SpawnedAgent(proc, stderr, client or RecordingClient())

    launch = _launch(make, command or agent_command(args), env, cwd, shutdown_timeout)
    async with launch as agent:
        with _single_error():
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(agent.pump_stdin)
                tasks.start_soon(agent.pump_stdout, agent._on_stdout, agent._from_agent.feed_eof)
                try:
                    with anyio.fail_after(timeout):
                        yield agent
                finally:
                    await agent.shut_down(shutdown_timeout)
                    tasks.cancel_scope.deadline = anyio.current_time() + shutdown_timeout


class RawAgent(AgentIO):
    """Plain pipes, no SDK: for tests that send bytes a real client never would."""

    def __init__(self, proc: Process, stderr: _StderrLog) -> None:
        super().__init__(proc, stderr)
        self._parsed_in, self._parsed = anyio.create_memory_object_stream[dict[str, Any] | None](math.inf)

    async def send_bytes(self, data: bytes, timeout: float = 5.0) -> None:
        assert self.proc.stdin is not None
        self.validator.feed_client(data)
        with anyio.fail_after(timeout):
            await self.proc.stdin.send(data)

    async def send_json(self, message: Any, timeout: float = 5.0) -> None:
        await self.send_bytes(json.dumps(message).encode() + b"\n", timeout)

    async def read_message(self, timeout: float = 5.0) -> dict[str, Any]:
        """The next line the agent writes, parsed (already checked against the schema)."""
        try:
            with anyio.fail_after(timeout):
                message = await self._parsed.receive()
        except anyio.EndOfStream:
            raise AssertionError(f"agent closed stdout\n{self.debug_report()}") from None
        if message is None:
            raise AssertionError(f"agent wrote a line that is not a JSON object\n{self.debug_report()}")
        return message

    async def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        await self.proc.stdin.aclose()

    async def wait_exit(self, timeout: float = 5.0) -> int:
        with anyio.fail_after(timeout):
            await self.proc.wait()
        assert self.proc.returncode is not None
        return self.proc.returncode

    def _deliver(self, chunk: bytes, parsed: list[dict[str, Any] | None]) -> None:
        for message in parsed:
            self._parsed_in.send_nowait(message)


@asynccontextmanager
async def raw_agent(
    env: Mapping[str, str] | None = None,
    *,
    cwd: str | os.PathLike[str] | None = None,
    args: Sequence[str] = ("acp",),
    command: Sequence[str] | None = None,
    timeout: float = 60.0,
    shutdown_timeout: float = 5.0,
) -> AsyncIterator[RawAgent]:
    """Run the agent with plain pipes; on exit stop it and check every line it wrote."""
    launch = _launch(RawAgent, command or agent_command(args), env, cwd, shutdown_timeout)
    async with launch as agent:
        with _single_error(), agent._parsed:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(agent.pump_stdout, agent._deliver, agent._parsed_in.close)
                try:
                    with anyio.fail_after(timeout):
                        yield agent
                finally:
                    agent.killed = await _stop(agent.proc, shutdown_timeout)
                    tasks.cancel_scope.deadline = anyio.current_time() + shutdown_timeout
