"""What the agent sends on one remote connection, until the client has read it: a bounded buffer.

The agent writes whole JSON-RPC lines (as on stdio); each line becomes one message on one `Lane` (the WebSocket,
or one of the connection's SSE streams). Together the lanes of a connection hold at most `max_bytes` (one message
more when a single message is bigger than that). When they are full the agent's writes wait for the client to
read; when the client reads nothing at all for `stall_timeout` seconds, the connection is given up (`on_stall`):
a client that stops reading costs the server a bounded amount of memory, and never holds up other connections.
"""

from __future__ import annotations

import logging
from collections import Counter, deque
from collections.abc import Callable

import anyio
import anyio.abc

log = logging.getLogger(__name__)

Route = Callable[[bytes], "tuple[Lane, str | None] | None"]
"""Which lane a message goes to, and the session it is about (None: not queued, the route took it)."""


class Lane:
    """One stream of messages the client reads, in order; at most one reader at a time (a new one takes over)."""

    def __init__(self, outbox: Outbox) -> None:
        self._outbox = outbox
        self._items: deque[tuple[bytes, str | None]] = deque()
        self._sessions: Counter[str] = Counter()  # how many queued messages are about each session
        self._wake = anyio.Event()
        self._reader: object | None = None
        self.changed = anyio.Event()  # set (and replaced) when a reader attaches or leaves, or the outbox closes

    def holding(self, session_id: str) -> int:
        return self._sessions[session_id]

    @property
    def pending(self) -> int:
        return len(self._items)

    @property
    def is_attached(self) -> bool:
        return self._reader is not None

    def _changed(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    def put(self, data: bytes, session_id: str | None) -> None:
        self._items.append((data, session_id))
        if session_id is not None:
            self._sessions[session_id] += 1
        self._outbox.queued_bytes += len(data)
        self._outbox.note_peak()
        self._signal()

    def _signal(self) -> None:
        self._wake.set()
        self._wake = anyio.Event()

    def attach(self) -> object:
        """Become this lane's reader (a reader already attached stops at its next `next`)."""
        self._reader = token = object()
        self._signal()
        self._changed()
        return token

    def detach(self, token: object) -> bool:
        """The reader has gone; False when another had already taken its place."""
        if self._reader is not token:
            return False
        self._reader = None
        self._changed()
        return True

    async def next(self, token: object, timeout: float) -> bytes | None:
        """The next message, or None after `timeout` seconds without one (time for a keep-alive).

        Raises `EndOfStream` once the outbox is closed and this lane is empty, or when another reader took over.
        """
        with anyio.move_on_after(timeout):
            while True:
                if self._reader is not token:
                    raise anyio.EndOfStream
                if self._items:
                    return self._take()
                if self._outbox.closed:
                    raise anyio.EndOfStream
                await self._wake.wait()
        return None

    def _take(self) -> bytes:
        data, session_id = self._items.popleft()
        if session_id is not None:
            self._sessions[session_id] -= 1
            if not self._sessions[session_id]:
                del self._sessions[session_id]
        self._outbox.taken(len(data))
        return data

    def move_to(self, other: Lane) -> None:
        """Hand every queued message to `other`, in order (its reader went away for good)."""
        while self._items:
            data, session_id = self._items.popleft()
            self._outbox.queued_bytes -= len(data)
            other.put(data, session_id)
        self._sessions.clear()

    def clear(self) -> None:
        for data, _ in self._items:
            self._outbox.queued_bytes -= len(data)
        self._items.clear()
        self._sessions.clear()
        self._signal()


class Outbox(anyio.abc.ByteSendStream):
    """The agent's send stream on one connection: whole lines in, routed to lanes, bounded in bytes."""

    def __init__(self, max_bytes: int, stall_timeout: float, on_stall: Callable[[str], None]) -> None:
        self.max_bytes = max_bytes
        self.stall_timeout = stall_timeout
        self._on_stall = on_stall
        self.queued_bytes = 0
        self.peak_bytes = 0
        self.closed = False
        self.closing = False  # the connection is ending: a write that does not fit is dropped, not waited for
        self.lanes: list[Lane] = []
        self.route: Route = self._default_route
        self.taps: list[Callable[[bytes], None]] = []  # see each line the agent writes (tests, benchmarks)
        self.aborted = anyio.Event()  # what was queued is dropped: writers stop at once
        self.backpressure = anyio.Event()  # set once the agent has had to wait for the client to read
        self._drained = anyio.Event()

    def lane(self) -> Lane:
        lane = Lane(self)
        self.lanes.append(lane)
        return lane

    def _default_route(self, data: bytes) -> tuple[Lane, str | None]:
        return self.lanes[0], None

    def note_peak(self) -> None:
        self.peak_bytes = max(self.peak_bytes, self.queued_bytes)

    def taken(self, size: int) -> None:
        self.queued_bytes -= size
        self._drained.set()
        self._drained = anyio.Event()

    async def send(self, item: bytes) -> None:
        for line in bytes(item).split(b"\n"):
            if not line:
                continue
            for tap in self.taps:
                tap(line + b"\n")
            await self._room_for(len(line))
            routed = self.route(line)
            if routed is not None:
                lane, session_id = routed
                lane.put(line, session_id)

    async def _room_for(self, size: int) -> None:
        while True:
            if self.closed:
                raise anyio.BrokenResourceError
            if not self.queued_bytes or self.queued_bytes + size <= self.max_bytes:
                return
            if self.closing:
                raise anyio.BrokenResourceError
            self.backpressure.set()
            with anyio.move_on_after(self.stall_timeout):
                await self._drained.wait()
                continue
            reason = (
                f"the client read nothing for {self.stall_timeout:g} s with {self.queued_bytes} bytes waiting "
                f"(limit {self.max_bytes})"
            )
            self.abort()
            self._on_stall(reason)
            raise anyio.BrokenResourceError

    def finish(self) -> None:
        """No more messages: readers get what is queued, then the end."""
        self.closed = True
        for lane in self.lanes:
            lane._signal()
            lane._changed()
        self._drained.set()

    def abort(self) -> None:
        """No more messages, and what is queued is dropped (the client is gone or too slow)."""
        self.closed = True
        self.aborted.set()
        for lane in self.lanes:
            lane.clear()
            lane._changed()
        self._drained.set()

    async def aclose(self) -> None:
        self.finish()
