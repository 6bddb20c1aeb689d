"""One remote ACP connection: the same agent as on stdio (`server.assembly.serve`), fed and read by a transport.

The transport hands in each client message (`deliver`) and reads the agent's messages from the outbox's lanes.
The agent ends when the input ends (`close`: the client went away, or ended the connection), as it does when an
editor closes stdin; then the connection's sessions are saved and let go, for any other connection to load.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream

from ..config.settings import Settings
from ..server.assembly import serve
from .claims import Claims
from .options import ServeOptions
from .outbox import Outbox

log = logging.getLogger(__name__)

Release = Callable[[], None]


def one_line(message: bytes) -> bytes:
    """A client message as one line of the agent's input: a raw line break can only be JSON whitespace."""
    return message.replace(b"\r", b" ").replace(b"\n", b" ") + b"\n"


def _nothing() -> None:
    pass


class ConnectionGone(Exception):
    """The connection has ended: nothing more can be delivered."""


class AgentInput(anyio.abc.ByteReceiveStream):
    """What the agent reads: each delivered message, then EOF once the connection's input is closed.

    A message counts in the server's inbound budget until the agent comes back for the next one: by then it has
    parsed and dispatched it (`acp.jsonrpc`), so what stays of it is the request's own business.
    """

    def __init__(self, receive: MemoryObjectReceiveStream[tuple[bytes, Release]]) -> None:
        self._receive = receive
        self._release = _nothing

    async def receive(self, max_bytes: int = 65536) -> bytes:
        self._release()
        self._release = _nothing
        try:
            line, self._release = await self._receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise anyio.EndOfStream from None
        return line

    async def aclose(self) -> None:
        self._release()
        self._release = _nothing
        while True:  # what was delivered and never read
            try:
                _, release = self._receive.receive_nowait()
            except (anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
                break
            release()
        self._receive.close()


class RemoteConnection:
    def __init__(self, settings: Settings, options: ServeOptions, claims: Claims, transport: str) -> None:
        self.id = uuid.uuid4().hex
        self.transport = transport
        self._settings = settings
        replay = options.replay_bytes if transport == "http" else 0  # a WebSocket cannot be resumed
        self.outbox = Outbox(options.max_buffer_bytes, options.stall_timeout, self._stalled, replay)
        self._to_agent, self._agent_input = anyio.create_memory_object_stream[tuple[bytes, Release]](1)
        self.claims = claims.holder(self.id)
        self.taps: list[Callable[[bytes], None]] = []  # see each client message (tests, benchmarks)
        self.ended = anyio.Event()
        self.close_reason: str | None = None

    async def run(self) -> None:
        """The agent, until the input ends and its turns have stopped and its sessions are let go."""
        agent_input = AgentInput(self._agent_input)
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(self.outbox.watch)
                await serve(self._settings, agent_input, self.outbox, claims=self.claims, remote=True)
                group.cancel_scope.cancel()
        except Exception:
            log.exception("connection %s: the agent failed", self.id)
        finally:
            self.claims.closing = True
            self.outbox.finish()
            self._to_agent.close()
            await agent_input.aclose()
            self.ended.set()
            log.info("connection %s (%s) ended: %s", self.id, self.transport, self.close_reason or "the agent stopped")

    async def deliver(self, message: bytes, release: Release = _nothing) -> None:
        """Give the agent one client message (one JSON value); waits while the agent is behind.

        `release` lets go of the message's place in the inbound budget, once the agent has taken it (or it is
        dropped): the caller counted it there before it read it.
        """
        line = one_line(message)
        for tap in self.taps:
            tap(line)
        try:
            await self._to_agent.send((line, release))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            release()
            raise ConnectionGone(self.id) from None
        except BaseException:
            release()
            raise

    def close(self, reason: str) -> None:
        """End the input: the agent finishes as when an editor closes stdin (turns cancelled, sessions saved)."""
        if self.close_reason is None:
            self.close_reason = reason
            log.info("connection %s (%s) closing: %s", self.id, self.transport, reason)
        self.claims.closing = True
        self.outbox.closing = True  # what the stopping turns still say must not wait for this client
        self._to_agent.close()

    def abort(self, reason: str) -> None:
        """End it, and drop what the client has not read."""
        self.outbox.abort()
        self.close(reason)

    def _stalled(self, reason: str) -> None:
        log.warning("connection %s (%s): %s; closing it", self.id, self.transport, reason)
        self.close(reason)
