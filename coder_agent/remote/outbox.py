"""What the agent sends on one remote connection, until the client has read it: a bounded buffer.

The agent writes whole JSON-RPC lines (as on stdio); each line becomes one message on one `Lane` (the WebSocket,
or one of the connection's SSE streams). Together the lanes of a connection hold at most `max_bytes` (one message
more when a single message is bigger than that), the message being written to the client included. When they
are full the agent's writes wait for the client to read. When something waits for the client and it reads
nothing for `stall_timeout` seconds, however little waits, the connection is given up (`on_stall`; `watch` is
the timer): a client that stops reading costs the server a bounded amount of memory for a bounded time, and never
holds up other connections.

Each message taken for sending gets a number, unique in the connection (an SSE event's `id`). The last
`replay_bytes` of messages taken are kept, so that a client that resumes a stream with `Last-Event-ID` gets again
what it may have lost on the way (the message in flight when its stream broke).
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
        self._replay: deque[tuple[int, bytes]] = deque()  # what a resuming reader gets first
        self._in_flight = 0  # size of the message the reader took last and may still be writing
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
        self._outbox.queued(len(data))
        self._signal()

    def _signal(self) -> None:
        self._wake.set()
        self._wake = anyio.Event()

    def attach(self, last_event_id: int | None = None) -> object:
        """Become this lane's reader (a reader already attached stops at its next `next`).

        `last_event_id`: the client resumes after that message: what was taken after it is sent again first.
        """
        self._done()
        self._reader = token = object()
        self._replay = deque(self._outbox.taken_after(self, last_event_id)) if last_event_id is not None else deque()
        self._signal()
        self._changed()
        return token

    def detach(self, token: object) -> bool:
        """The reader has gone; False when another had already taken its place."""
        if self._reader is not token:
            return False
        self._done()
        self._reader = None
        self._replay.clear()
        self._changed()
        return True

    def _done(self) -> None:
        """The message the reader took last is written (or lost with its stream: `replay` has it)."""
        if self._in_flight:
            self._outbox.taken(self._in_flight)
            self._in_flight = 0

    async def next(self, token: object, timeout: float) -> tuple[int, bytes] | None:
        """The next message and its number, or None after `timeout` seconds without one (time for a keep-alive).

        Asking for the next message says that the last one is written. Raises `EndOfStream` once the outbox is
        closed and this lane is empty, or when another reader took over.
        """
        if self._reader is token:
            self._done()
        with anyio.move_on_after(timeout):
            while True:
                if self._reader is not token:
                    raise anyio.EndOfStream
                if self._replay:
                    return self._replay.popleft()
                if self._items:
                    return self._take()
                if self._outbox.closed:
                    raise anyio.EndOfStream
                await self._wake.wait()
        return None

    def _take(self) -> tuple[int, bytes]:
        data, session_id = self._items.popleft()
        if session_id is not None:
            self._sessions[session_id] -= 1
            if not self._sessions[session_id]:
                del self._sessions[session_id]
        self._in_flight = len(data)
        return self._outbox.number(self, data), data

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
        self._replay.clear()
        self._outbox.queued_bytes -= self._in_flight
        self._in_flight = 0
        self._signal()


class Outbox(anyio.abc.ByteSendStream):
    """The agent's send stream on one connection: whole lines in, routed to lanes, bounded in bytes."""

    def __init__(
        self, max_bytes: int, stall_timeout: float, on_stall: Callable[[str], None], replay_bytes: int = 0
    ) -> None:
        self.max_bytes = max_bytes
        self.stall_timeout = stall_timeout
        self.replay_bytes = replay_bytes
        self._on_stall = on_stall
        self.queued_bytes = 0  # queued on the lanes, and being written
        self.peak_bytes = 0
        self.closed = False
        self.closing = False  # the connection is ending: a write that does not fit is dropped, not waited for
        self.lanes: list[Lane] = []
        self.route: Route = self._default_route
        self.taps: list[Callable[[bytes], None]] = []  # see each line the agent writes (tests, benchmarks)
        self.aborted = anyio.Event()  # what was queued is dropped: writers stop at once
        self.backpressure = anyio.Event()  # set once the agent has had to wait for the client to read
        self._drained = anyio.Event()
        self._waiting_since = 0.0  # since when the client has read nothing while something waits for it
        self._numbers = 0
        self._sent: deque[tuple[Lane, int, bytes]] = deque()  # the last messages taken, for `Last-Event-ID`
        self._sent_bytes = 0

    def lane(self) -> Lane:
        lane = Lane(self)
        self.lanes.append(lane)
        return lane

    def _default_route(self, data: bytes) -> tuple[Lane, str | None]:
        return self.lanes[0], None

    def queued(self, size: int) -> None:
        if not self.queued_bytes:
            self._waiting_since = anyio.current_time()
        self.queued_bytes += size
        self.peak_bytes = max(self.peak_bytes, self.queued_bytes)

    def taken(self, size: int) -> None:
        """The client read a message of `size` bytes."""
        self.queued_bytes -= size
        self._waiting_since = anyio.current_time()
        self._drained.set()
        self._drained = anyio.Event()

    def number(self, lane: Lane, data: bytes) -> int:
        """Number a message taken for sending, and keep it (within `replay_bytes`) for a client that resumes."""
        self._numbers += 1
        if self.replay_bytes:
            self._sent.append((lane, self._numbers, data))
            self._sent_bytes += len(data)
            while self._sent_bytes > self.replay_bytes and len(self._sent) > 1:
                self._sent_bytes -= len(self._sent.popleft()[2])
        return self._numbers

    def taken_after(self, lane: Lane, number: int) -> list[tuple[int, bytes]]:
        """The messages of `lane` taken after message `number` that are still kept, in order."""
        oldest = self._sent[0][1] if self._sent else self._numbers + 1
        if oldest > number + 1:
            log.warning(
                "a stream resumed after event %s, but events %s to %s are no longer kept: some may be lost",
                number,
                number + 1,
                oldest - 1,
            )
        return [(n, data) for owner, n, data in self._sent if owner is lane and n > number]

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
        """Wait until `size` more bytes fit (`watch` gives the connection up if the client never reads)."""
        while True:
            if self.closed:
                raise anyio.BrokenResourceError
            if not self.queued_bytes or self.queued_bytes + size <= self.max_bytes:
                return
            if self.closing:
                raise anyio.BrokenResourceError
            self.backpressure.set()
            await self._drained.wait()

    async def watch(self) -> None:
        """The stall rule, on time: end the connection once something has waited `stall_timeout` seconds for a
        client that read nothing meanwhile, however little it is. Runs until the outbox closes."""
        while not self.closed:
            waited = anyio.current_time() - self._waiting_since
            if self.queued_bytes and waited >= self.stall_timeout:
                reason = (
                    f"the client read nothing for {self.stall_timeout:g} s with {self.queued_bytes} bytes waiting "
                    f"(limit {self.max_bytes})"
                )
                self.abort()
                self._on_stall(reason)
                return
            # Sleeps once per `stall_timeout` at most: no work per message (the hot path only notes a time).
            await anyio.sleep(self.stall_timeout - waited if self.queued_bytes else self.stall_timeout)

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
        self._sent.clear()
        self._sent_bytes = 0
        self._drained.set()

    async def aclose(self) -> None:
        self.finish()
