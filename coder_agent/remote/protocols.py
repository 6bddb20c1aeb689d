"""uvicorn's HTTP/1.1 (h11) and WebSocket protocols, with the limits a server on a reachable port needs.

uvicorn has no timeout on a request's head (only `timeout_keep_alive`, which any byte resets) and no bound on
connections that never authenticate; its WebSocket protocol answers every ping even when the client reads none of
the answers, and assembles a message of up to `ws_max_size` before the application sees it. So, subclassed here:

- HTTP: a request head must arrive within `header_timeout` (from the accept, or from the previous response),
  else the connection is closed; connections that have not shown the token are bounded (`admission`).
- WebSocket: each data frame's payload is counted in the server's inbound budget before it is read (the frame's
  head says how long it is; `FrameScanner` reads the heads off the raw bytes); a frame that does not fit pauses
  reading from that client until there is room, and after `budget.wait` seconds the connection is closed (1013).
  While the client does not read what is written to it, nothing more is read from it either (its pings would
  otherwise pile up answers). websockets' own debug log is off: it writes every request header, the token
  included.

uvicorn's class names and hooks are not a public API: `tests/remote` exercise every one used here.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, cast

from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.http11 import Request

from .admission import Admission, Peer
from .budget import Held, InboundBudget

log = logging.getLogger(__name__)

INBOUND_EXTENSION = "coder_agent.inbound"  # the scope extension holding a WebSocket connection's `Held`
_DATA_OPCODES = (0x0, 0x1, 0x2)  # continuation, text, binary
CLOSE_TRY_LATER = 1013
_LARGE_FRAME = 64 * 1024
_EMPTY_PONG = b"\x8a\x80\x00\x00\x00\x00"  # FIN + pong, masked (as from a client), no payload


class FrameScanner:
    """Where each WebSocket frame's head ends in the client's byte stream, and how long its payload is."""

    def __init__(self) -> None:
        self._head = bytearray()
        self._skip = 0  # payload bytes still to pass

    @property
    def between_frames(self) -> bool:
        return not self._skip and not self._head

    def scan(self, data: bytes, start: int) -> tuple[int, int]:
        """From `start`, the offset just past the next data frame's head and its payload size; or the end of
        `data` and 0 when no such head ends in it (control frames and empty frames need no room)."""
        i = start
        while i < len(data):
            if self._skip:
                step = min(self._skip, len(data) - i)
                self._skip -= step
                i += step
                continue
            self._head.append(data[i])
            i += 1
            size = _head_size(self._head)
            if size is None or len(self._head) < size:
                continue
            opcode, length = self._head[0] & 0x0F, _payload_size(self._head)
            self._head.clear()
            self._skip = length
            if opcode in _DATA_OPCODES and length:
                return i, length
        return i, 0


def _head_size(head: bytearray) -> int | None:
    if len(head) < 2:
        return None
    short = head[1] & 0x7F
    extended = 2 if short == 126 else 8 if short == 127 else 0
    return 2 + extended + (4 if head[1] & 0x80 else 0)


def _payload_size(head: bytearray) -> int:
    short = head[1] & 0x7F
    if short == 126:
        return int.from_bytes(head[2:4], "big")
    if short == 127:
        return int.from_bytes(head[2:10], "big")
    return short


class GuardedH11Protocol(H11Protocol):
    admission: Admission
    header_timeout: float

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head_timer: asyncio.TimerHandle | None = None
        self._awaiting: object = None  # the request cycle before the head we wait for
        self.admission.arrived(self, self.client, transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.transport.get_protocol() is not self:  # upgraded: a WebSocket's gate check follows at once
            self._disarm()
            self.admission.left(self, self.client)
        elif self.cycle is not self._awaiting:  # a whole head came: the application has the request
            self._disarm()

    def on_response_complete(self) -> None:
        self._awaiting = self.cycle
        self._arm()
        super().on_response_complete()  # may start on a pipelined request at once
        if self.cycle is not self._awaiting:
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self.admission.left(self, self.client)
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._head_timer = self.loop.call_later(self.header_timeout, self._head_late)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_late(self) -> None:
        self._head_timer = None
        if not self.transport.is_closing():
            log.debug("closing a connection that sent no whole request head in %g s", self.header_timeout)
            self.transport.close()


class GuardedWebSocketProtocol(WebSocketsSansIOProtocol):
    budget: InboundBudget

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.conn.debug = False  # it would log each request header at DEBUG: `Authorization` is the serve token
        self.held = Held(self.budget)
        self._scanner = FrameScanner()
        self._handshake_read = False
        self._wanted = 0  # the payload size of a frame whose head was read, not yet counted in the budget
        self._stash = b""  # what was read past that head
        self._waiting_room = False
        self._large_frame = False  # a large data frame was read: the parser keeps it until another frame comes
        self._writing_backed_up = False
        self._room_timer: asyncio.TimerHandle | None = None

    def handle_connect(self, event: Request) -> None:
        super().handle_connect(event)
        if self.handshake_initiated and not self.close_sent:  # the application runs: it releases what it takes
            extensions = cast(dict[str, Any], self.scope.setdefault("extensions", {}))
            extensions[INBOUND_EXTENSION] = self.held

    def data_received(self, data: bytes) -> None:
        if not self._handshake_read:  # the upgrade request, as the HTTP protocol hands it over
            self._handshake_read = True
            super().data_received(data)
            return
        if self._waiting_room:  # read before the pause took effect
            self._stash += data
            return
        self._feed(data)

    def _feed(self, data: bytes) -> None:
        i = 0
        while True:
            if self._wanted:
                if not self._room_for(self._wanted):
                    self._stash = data[i:]
                    self._wait_for_room()
                    return
                self._wanted = 0
            if i >= len(data) or self.transport.is_closing():
                return
            end, self._wanted = self._scanner.scan(data, i)
            super().data_received(data[i:end])
            i = end
            if self._wanted >= _LARGE_FRAME:
                self._large_frame = True
            elif self._large_frame and self._scanner.between_frames and not self.transport.is_closing():
                # websockets' parser keeps the last frame it read (a local of its generator) until the next one
                # comes: an idle client would keep its last message (up to 16 MiB) in the server for good. An
                # empty pong, which nobody waits for, takes its place (it is ignored as unsolicited).
                self._large_frame = False
                super().data_received(_EMPTY_PONG)

    def _room_for(self, size: int) -> bool:
        if self.close_sent:  # closing: its messages are dropped unread
            return True
        return self.held.try_take(size)

    def _wait_for_room(self) -> None:
        self._waiting_room = True
        self.transport.pause_reading()
        self.budget.when_freed(self._retry)
        if self._room_timer is None:
            self._room_timer = self.loop.call_later(self.budget.wait, self._no_room)

    def _retry(self) -> None:
        if self.transport.is_closing():
            return
        self._waiting_room = False
        data, self._stash = self._stash, b""
        self._feed(data)
        if not self._waiting_room:
            self._stop_room_timer()
            self._resume()

    def _no_room(self) -> None:
        self._room_timer = None
        if self._waiting_room and not self.transport.is_closing():
            log.warning("a WebSocket message waited %g s for room in the inbound budget: closing", self.budget.wait)
            self.conn.fail(CLOSE_TRY_LATER, "the server is busy: try again later")
            self.transport.write(b"".join(self.conn.data_to_send()))
            self.close_sent = True
            self.transport.close()

    def _stop_room_timer(self) -> None:
        if self._room_timer is not None:
            self._room_timer.cancel()
            self._room_timer = None

    def _resume(self) -> None:
        """Read again, unless a message waits for the application, or for room, or the client reads nothing."""
        if not (self.read_paused or self._waiting_room or self._writing_backed_up or self.transport.is_closing()):
            self.transport.resume_reading()

    async def receive(self) -> Any:
        message = await self.queue.get()
        if self.read_paused and self.queue.empty():
            self.read_paused = False
            self._resume()
        return message

    def pause_writing(self) -> None:
        super().pause_writing()
        self._writing_backed_up = True
        self.transport.pause_reading()

    def resume_writing(self) -> None:
        super().resume_writing()
        self._writing_backed_up = False
        self._resume()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_room_timer()
        self.budget.forget(self._retry)
        self._stash = b""
        self.held.release()
        super().connection_lost(exc)


def guarded_protocols(
    admission: Admission, header_timeout: float, budget: InboundBudget
) -> tuple[type[GuardedH11Protocol], type[GuardedWebSocketProtocol]]:
    """The two protocol classes for one server (uvicorn makes each connection's from the class alone)."""
    http = type("ServerH11Protocol", (GuardedH11Protocol,), {"admission": admission, "header_timeout": header_timeout})
    websocket = type("ServerWebSocketProtocol", (GuardedWebSocketProtocol,), {"budget": budget})
    return http, websocket


def peer_of(scope: Any) -> Peer | None:
    client = scope.get("client")
    return (str(client[0]), int(client[1])) if client else None
