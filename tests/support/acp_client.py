"""The editor side of every end-to-end test: spawn the agent, drive it, check every line it writes.

The process is started and stopped by the eval harness's launcher (`evals.harness.agent_process.start_agent`:
the one way the evals, the tests and the benchmarks run `coder-agent acp`), which shows every byte both ways to
an ``AgentMessageValidator``. ``spawn_agent`` drives it with the official SDK's ``ClientSideConnection``;
``raw_agent`` gives plain bytes for bad-input tests. Both fail the test on exit if any line the agent wrote
breaks framing or the ACP v1 schema, or if its stdout did not end.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import tempfile
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from acp.client.connection import ClientSideConnection
from anyio.abc import Process
from anyio.streams.memory import MemoryObjectSendStream

from evals.harness.agent_process import AgentPipes, agent_command, start_agent
from evals.harness.wire import WireLog
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
# tests/conftest.py turns language servers off but in the tests about them: an agent process is told so too.
_TEST_ENV = ("CODER_AGENT_LANGUAGE_SERVERS",)


def base_env() -> dict[str, str]:
    """The minimal environment the agent gets before the test's own env is merged over it."""
    return {key: os.environ[key] for key in (*_INHERITED_ENV, *_OFFLINE_ENV, *_TEST_ENV) if key in os.environ}


class AgentIO:
    """What both harnesses share: the process, its stderr, and the checker that saw all of its stdout."""

    def __init__(self, pipes: AgentPipes) -> None:
        self.pipes = pipes
        self._stderr: str | None = None

    @property
    def proc(self) -> Process:
        return self.pipes.process

    @property
    def validator(self) -> AgentMessageValidator:
        return self.pipes.wire.validator

    @property
    def killed(self) -> bool:
        """The agent ignored stdin EOF for the shutdown timeout."""
        return self.pipes.killed

    @property
    def agent_lines(self) -> list[bytes]:
        return self.validator.agent_lines

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.validator.messages

    def stderr_text(self) -> str:
        if self._stderr is not None:
            return self._stderr
        return self.pipes.stderr_path.read_text("utf-8", errors="replace")

    def keep_stderr(self) -> None:
        self._stderr = self.stderr_text()

    def debug_report(self) -> str:
        tail = self.stderr_text()[-4000:]
        return f"{self.validator.report()}\n--- agent stderr (last 4000 chars) ---\n{tail}"

    def check(self) -> None:
        if not self.pipes.stdout_ended:
            raise AssertionError(f"agent stdout never reached EOF (a child still holds it?)\n{self.debug_report()}")
        if self.validator.violations:
            raise AssertionError(self.debug_report())


@asynccontextmanager
async def _launch(
    command: Sequence[str],
    env: Mapping[str, str] | None,
    cwd: str | os.PathLike[str] | None,
    shutdown_timeout: float,
    wire: WireLog | None = None,
) -> AsyncIterator[AgentPipes]:
    """Start the process (its stderr in a temp folder); afterwards it is stopped, and its stderr kept."""
    with tempfile.TemporaryDirectory(prefix="agent-stderr-") as folder:
        launch = start_agent(
            wire or WireLog(),
            env={**base_env(), **(env or {})},
            cwd=cwd if cwd is not None else os.getcwd(),
            stderr_path=Path(folder) / "stderr.log",
            command=command,
            shutdown_timeout=shutdown_timeout,
        )
        async with launch as pipes:
            yield pipes


def _innermost(error: BaseException) -> BaseException:
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


@contextlib.contextmanager
def _single_error() -> Iterator[None]:
    """Let the test see its own exception, not the one-member ExceptionGroups task groups wrap it in."""
    try:
        yield
    except BaseExceptionGroup as group:
        error = _innermost(group)
        if error is group:
            raise
        raise error from None


@asynccontextmanager
async def _checked(agent: AgentIO) -> AsyncIterator[None]:
    """The test's error gets the agent's report; on a clean exit, everything the agent wrote is checked."""
    try:
        yield
    except Exception as exc:
        _innermost(exc).add_note(agent.debug_report())
        raise
    finally:
        await agent.pipes.stop()
        agent.keep_stderr()
    agent.check()


class _QueueTransport(asyncio.WriteTransport):
    """Under the SDK's StreamWriter: queues each write for the agent's stdin (where the checker sees it)."""

    def __init__(self, sink: MemoryObjectSendStream[bytes]) -> None:
        super().__init__()
        self._sink = sink
        self._closed = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._sink.send_nowait(bytes(data))

    def is_closing(self) -> bool:
        return self._closed

    def close(self) -> None:
        self._closed = True
        self._sink.close()


class SpawnedAgent(AgentIO):
    """The agent under the official SDK's ClientSideConnection (``conn``), answered by ``client``."""

    def __init__(self, pipes: AgentPipes, client: RecordingClient) -> None:
        super().__init__(pipes)
        self.client = client
        self._from_agent = asyncio.StreamReader()
        sink, self._source = anyio.create_memory_object_stream[bytes](math.inf)
        self._transport = _QueueTransport(sink)
        protocol = asyncio.streams.FlowControlMixin()  # gives the StreamWriter its drain()
        writer = asyncio.StreamWriter(self._transport, protocol, None, asyncio.get_running_loop())
        # A client that answers elicitations says so (`eliciting_client`): the SDK routes them only with this flag.
        unstable = bool(getattr(client, "use_unstable_protocol", False))
        self.conn = ClientSideConnection(client, writer, self._from_agent, use_unstable_protocol=unstable)
        self.stdin_flushed = anyio.Event()

    async def pump_stdout(self) -> None:
        """What the agent wrote, to the SDK, which does its own framing exactly as on a real pipe."""
        with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError):
            while True:
                self._from_agent.feed_data(await self.pipes.stdout.receive())
        self._from_agent.feed_eof()

    async def pump_stdin(self) -> None:
        """Copy what the SDK writes to the agent's stdin; once the transport closes, close stdin (EOF)."""
        try:
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                async with self._source:
                    async for data in self._source:
                        await self.pipes.stdin.send(data)
                await self.pipes.stdin.aclose()
        finally:
            self.stdin_flushed.set()

    async def shut_down(self) -> None:
        with anyio.CancelScope(shield=True):
            await self.conn.close()  # flushes what the SDK has queued, then stops its tasks
            self._transport.close()
            with anyio.move_on_after(self.pipes.shutdown_timeout):
                await self.stdin_flushed.wait()
            await self.pipes.stop()


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
    with _single_error():
        async with _launch(command or agent_command(args), env, cwd, shutdown_timeout) as pipes:
            agent = SpawnedAgent(pipes, client or RecordingClient())
            async with _checked(agent), anyio.create_task_group() as tasks:
                tasks.start_soon(agent.pump_stdin)
                tasks.start_soon(agent.pump_stdout)
                try:
                    with anyio.fail_after(timeout):
                        yield agent
                finally:
                    await agent.shut_down()
                    tasks.cancel_scope.deadline = anyio.current_time() + shutdown_timeout


class _Lines:
    """The lines the agent writes, as the checker parsed them, queued for `read_message`."""

    def __init__(self) -> None:
        self.sink, self.source = anyio.create_memory_object_stream[dict[str, Any] | None](math.inf)

    def deliver(self, parsed: list[dict[str, Any] | None]) -> None:
        for message in parsed:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                self.sink.send_nowait(message)


class RawAgent(AgentIO):
    """Plain pipes, no SDK: for tests that send bytes a real client never would."""

    def __init__(self, pipes: AgentPipes, lines: _Lines) -> None:
        super().__init__(pipes)
        self._lines = lines
        self._parsed = lines.source

    async def send_bytes(self, data: bytes, timeout: float = 5.0) -> None:
        with anyio.fail_after(timeout):
            await self.pipes.stdin.send(data)

    async def send_unchecked(self, data: bytes, timeout: float = 5.0) -> None:
        """Bytes the checker is not shown (it would choke on them as the agent must not)."""
        assert self.proc.stdin is not None
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
        await self.pipes.stdin.aclose()

    async def wait_exit(self, timeout: float = 5.0) -> int:
        with anyio.fail_after(timeout):
            await self.proc.wait()
        assert self.proc.returncode is not None
        return self.proc.returncode

    async def pump_stdout(self) -> None:
        """Read the agent's stdout to its end (the checker hands each line to `read_message`), then EOF."""
        with self._lines.sink, contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError):
            while True:
                await self.pipes.stdout.receive()


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
    lines = _Lines()
    wire = WireLog(on_agent_lines=lines.deliver)
    with _single_error(), lines.source:
        async with _launch(command or agent_command(args), env, cwd, shutdown_timeout, wire) as pipes:
            agent = RawAgent(pipes, lines)
            async with _checked(agent), anyio.create_task_group() as tasks:
                tasks.start_soon(agent.pump_stdout)
                try:
                    with anyio.fail_after(timeout):
                        yield agent
                finally:
                    await agent.pipes.stop()
                    tasks.cancel_scope.deadline = anyio.current_time() + shutdown_timeout
