"""The agent in this process: the real protocol layer and core, served over memory streams.

`inproc_agent` puts the official SDK's ``ClientSideConnection`` on the other end (as `spawn_agent` does with a
process), `inproc_raw` gives plain bytes in and parsed lines out (as `raw_agent` does). Both check every line
the agent writes against the ACP v1 schema, and fail the test if the agent's serve loop crashes. No process is
started, so no test pays the model library's import more than once per test run.

With ``stdio=True`` the bytes go through OS pipes, to the very code `coder-agent acp` runs on its stdin and
stdout: the early reader that answers a first `initialize` (`prestart.early`), then the stdio transport.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel
from acp.client.connection import ClientSideConnection

from coder_agent.acp.byte_streams import MemoryByteReceiveStream
from coder_agent.config.settings import Settings
from coder_agent.prestart.capabilities import initialize_result
from coder_agent.prestart.early import EarlyRead, answer_initialize, answer_next
from coder_agent.prestart.early_session import new_session_answerer
from coder_agent.prestart.settings_peek import Peek
from coder_agent.server.assembly import serve, serve_stdio
from coder_agent.server.settings_problems import NEEDED_BY
from tests.support.acp_schema import AgentMessageValidator
from tests.support.recording_client import RecordingClient


def test_settings(home: Path, api_base: str | None, **overrides: Any) -> Settings:
    """Settings as the e2e `agent_env` gives them: the scripted model, fast retries, a private home."""
    values: dict[str, Any] = {
        "model": "openai/scripted",
        "api_base": api_base,
        "api_key": "sk-test",
        "home": home,
        "retry_base_delay": 0.01,
        "max_retries": 2,
        "request_timeout": 20.0,
        "language_servers": False,  # started only by the tests about them (tests/lsp, test_*diagnostics*)
    }
    values.update(overrides)
    return Settings.model_validate(values)


class _Outbox(anyio.abc.ByteSendStream):
    """What the agent writes: handed to `deliver` at once (checked, then given to the client).

    `gate`, when set, is awaited before each write: a test can hold the agent inside a write, as a client that
    stops reading its stdout for a while does.
    """

    def __init__(self, deliver: Callable[[bytes], None]) -> None:
        self._deliver = deliver
        self.closed = False
        self.gate: Callable[[bytes], Awaitable[None]] | None = None

    async def send(self, item: bytes) -> None:
        if self.closed:
            raise anyio.BrokenResourceError
        if self.gate is not None:
            await self.gate(bytes(item))
        self._deliver(bytes(item))

    async def aclose(self) -> None:
        self.closed = True


class InprocIO:
    """The streams between the test and the agent, and the checker that sees everything the agent writes."""

    def __init__(self) -> None:
        self.validator = AgentMessageValidator()
        self.stopped = anyio.Event()  # the agent's serve loop returned (its input ended)
        self._to_agent, to_agent_out = anyio.create_memory_object_stream[bytes](math.inf)
        self.inbox = MemoryByteReceiveStream(to_agent_out)
        self.outbox = _Outbox(self._from_agent)
        self._listeners: list[Callable[[bytes, list[dict[str, Any] | None]], None]] = []
        # Every whole message in the order it crossed: ("agent", message) written, ("client", message) sent.
        self.wire: list[tuple[str, dict[str, Any]]] = []
        self._client_partial = b""
        self._written: anyio.Event | None = None  # set at the agent's next write (`wait_for_message`)

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.validator.messages

    def _from_agent(self, data: bytes) -> None:
        parsed = self.validator.feed_agent(data)
        self.wire += [("agent", message) for message in parsed if message is not None]
        for listener in self._listeners:
            listener(data, parsed)
        if self._written is not None:
            self._written.set()
            self._written = None

    async def wait_for_message(self, match: Callable[[dict[str, Any]], bool], timeout: float = 5.0) -> dict[str, Any]:
        """The first message the agent wrote that `match`es, waiting (bounded) for it to be written."""
        with anyio.fail_after(timeout):
            while (found := next((m for m in self.messages if match(m)), None)) is None:
                self._written = self._written or anyio.Event()
                await self._written.wait()
        return found

    def to_agent(self, data: bytes, check: bool = True) -> None:
        if check:
            self.validator.feed_client(data)
            *lines, self._client_partial = (self._client_partial + data).split(b"\n")
            for line in lines:
                with contextlib.suppress(ValueError, RecursionError):
                    message = json.loads(line)
                    if isinstance(message, dict):
                        self.wire.append(("client", message))
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._to_agent.send_nowait(data)

    def close_input(self) -> None:
        self._to_agent.close()

    def forgive_unstable_fork_result(self) -> None:
        """`session/fork` is unstable: the v1 schema has no result type for it (the SDK parsed it already)."""
        self.validator.violations = [v for v in self.validator.violations if "'session/fork'" not in v.problem]

    def check(self) -> None:
        self.validator.end_agent()
        if self.validator.violations:
            raise AssertionError(self.validator.report())


class _ClientTransport(asyncio.WriteTransport):
    """Under the SDK's StreamWriter: its writes go to the agent's input."""

    def __init__(self, io: InprocIO) -> None:
        super().__init__()
        self._io = io
        self._closed = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self._io.to_agent(bytes(data))

    def is_closing(self) -> bool:
        return self._closed

    def close(self) -> None:
        self._closed = True
        self._io.close_input()


class InprocAgent:
    """The agent under the official SDK's ClientSideConnection (``conn``), answered by ``client``."""

    def __init__(self, io: InprocIO, client: RecordingClient) -> None:
        self.io = io
        self.client = client
        self._from_agent = asyncio.StreamReader()
        io._listeners.append(lambda data, _parsed: self._from_agent.feed_data(data))
        self._transport = _ClientTransport(io)
        protocol = asyncio.streams.FlowControlMixin()
        writer = asyncio.StreamWriter(self._transport, protocol, None, asyncio.get_running_loop())
        # A client that answers elicitations says so (`eliciting_client`): the SDK routes them only with this flag.
        unstable = bool(getattr(client, "use_unstable_protocol", False))
        self.conn = ClientSideConnection(client, writer, self._from_agent, use_unstable_protocol=unstable)

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.io.messages


class InprocRaw:
    """Plain bytes to the agent, parsed lines back: for input no real client would send."""

    def __init__(self, io: InprocIO) -> None:
        self.io = io
        self._lines_in, self._lines = anyio.create_memory_object_stream[dict[str, Any] | None](math.inf)
        io._listeners.append(self._deliver)

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.io.messages

    def _deliver(self, data: bytes, parsed: list[dict[str, Any] | None]) -> None:
        for message in parsed:
            self._lines_in.send_nowait(message)

    async def send_bytes(self, data: bytes) -> None:
        self.io.to_agent(data)
        await anyio.lowlevel.checkpoint()

    async def send_unchecked(self, data: bytes) -> None:
        """Bytes the checker is not shown (it would choke on them as the agent must not)."""
        self.io.to_agent(data, check=False)
        await anyio.lowlevel.checkpoint()

    async def send_json(self, message: Any) -> None:
        await self.send_bytes(json.dumps(message).encode() + b"\n")

    async def read_message(self, timeout: float = 5.0) -> dict[str, Any]:
        with anyio.fail_after(timeout):
            message = await self._lines.receive()
        if message is None:
            raise AssertionError(f"agent wrote a line that is not a JSON object\n{self.io.validator.report()}")
        return message

    async def read_reply(self, request_id: Any, timeout: float = 5.0) -> dict[str, Any]:
        """The answer to `request_id`, skipping notifications and other answers on the way."""
        with anyio.fail_after(timeout):
            while True:
                message = await self.read_message(timeout)
                if "method" not in message and message.get("id") == request_id:
                    return message

    def close_input(self) -> None:
        self.io.close_input()

    @property
    def serving(self) -> bool:
        return not self.io.stopped.is_set()

    async def wait_stopped(self, timeout: float = 5.0) -> None:
        """Until the agent's serve loop has returned, as `coder-agent acp` exits when its stdin ends."""
        with anyio.fail_after(timeout):
            await self.io.stopped.wait()


def peek_of(settings: Settings) -> Peek:
    """What `settings_peek` finds for these settings (in-process agents serve settings a test made)."""
    refused = any("session/new" in NEEDED_BY.get(name, ()) for name in settings.problems)
    return Peek(
        settings.model,
        tuple(settings.models),
        settings.default_mode,
        not refused,
        str(settings.home),
        settings.thought_level,
    )


class _Pipes:
    """OS pipes in place of the memory streams: the test's bytes to the agent's stdin, its stdout to the test."""

    def __init__(self, io: InprocIO) -> None:
        self.io = io
        self.in_read, self.in_write = os.pipe()
        self.out_read, self.out_write = os.pipe()
        os.set_blocking(self.in_write, False)
        os.set_blocking(self.out_read, False)
        # What the SDK or the test sends goes to the pipe, in order, without blocking the sender.
        io._to_agent, self._to_pipe = anyio.create_memory_object_stream[bytes](math.inf)

    async def feed_stdin(self) -> None:
        """Everything sent to the agent, into its stdin; once the test closes its side, EOF."""
        try:
            async for data in self._to_pipe:
                view = memoryview(data)
                while view:
                    await anyio.wait_writable(self.in_write)
                    try:
                        view = view[os.write(self.in_write, view) :]
                    except BlockingIOError:
                        continue
                    except BrokenPipeError:
                        return
        finally:
            os.close(self.in_write)

    def _answer_early(self, settings: Settings) -> EarlyRead:
        early = answer_initialize(self.in_read, self.out_write, initialize_result)
        answer = new_session_answerer(peek_of(settings))
        # The runtime is imported already: the reader waits for the second line (the CLI stops waiting when the
        # runtime is in; a client that sends nothing after `initialize` ends its input, or sends another request).
        return answer_next(early, self.in_read, self.out_write, "session/new", answer)

    async def drain_stdout(self) -> None:
        """Everything the agent writes, to the checker and the client, until its stdout ends."""
        try:
            while True:
                await anyio.wait_readable(self.out_read)
                try:
                    data = os.read(self.out_read, 65536)
                except BlockingIOError:
                    continue
                if not data:
                    return
                self.io._from_agent(data)
        finally:
            os.close(self.out_read)

    async def serve(self, settings: Settings) -> None:
        """What `coder-agent acp` does with fds 0 and 1: answer a first `initialize` and a plain `session/new`
        early, then serve."""
        try:
            early: EarlyRead = await anyio.to_thread.run_sync(self._answer_early, settings)
            await serve_stdio(settings, self.in_read, self.out_write, early)
        finally:
            os.close(self.out_write)  # the stdio transport leaves the fd open, as it does with fd 1
            os.close(self.in_read)


@asynccontextmanager
async def _serving(settings: Settings, io: InprocIO, stdio: bool = False) -> AsyncIterator[None]:
    pipes = _Pipes(io) if stdio else None

    async def run() -> None:
        if pipes is None:
            await serve(settings, io.inbox, io.outbox)
        else:
            await pipes.serve(settings)
        io.stopped.set()

    async with anyio.create_task_group() as tasks:
        if pipes is not None:
            tasks.start_soon(pipes.feed_stdin)
            tasks.start_soon(pipes.drain_stdout)
        tasks.start_soon(run)
        try:
            yield
        finally:
            io.close_input()  # EOF: the agent lets what is in flight finish, briefly, and stops
            tasks.cancel_scope.deadline = anyio.current_time() + 10
    if not io.stopped.is_set():
        raise AssertionError("the agent did not stop within 10 s of the end of its input")
    io.check()


@asynccontextmanager
async def inproc_agent(
    settings: Settings, client: RecordingClient | None = None, timeout: float = 60.0, stdio: bool = False
) -> AsyncIterator[InprocAgent]:
    """The agent served in this process, with the SDK client on the other end; checked on exit."""
    io = InprocIO()
    async with _serving(settings, io, stdio):
        agent = InprocAgent(io, client or RecordingClient())
        try:
            with anyio.fail_after(timeout):
                yield agent
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                await agent.conn.close()


@asynccontextmanager
async def inproc_raw(settings: Settings, timeout: float = 60.0, stdio: bool = False) -> AsyncIterator[InprocRaw]:
    """The agent served in this process, with plain bytes in and parsed lines out; checked on exit."""
    io = InprocIO()
    async with _serving(settings, io, stdio):
        raw = InprocRaw(io)
        with anyio.fail_after(timeout):
            yield raw
