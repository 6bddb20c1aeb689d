"""Streamable HTTP: which SSE stream each of the agent's messages goes out on.

A connection has one connection-scoped stream and may open one stream per session (`Acp-Session-Id`). A message
about a session goes on that session's stream while the client has it open, else on the connection stream, so
a client that reads only the connection stream (as the RFD's later revision has it) gets everything. Order
within a session is kept: a session's messages switch to its stream only once none of them is still waiting on
the connection stream, and never while a `session/load` or `session/resume` of it runs (its replay and the
answer go on the connection stream, which the client reads before it knows about the session).
`initialize` answers are not streamed: the POST that carried the request returns them (`capture`).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import anyio

from ..acp.jsonrpc import valid_id
from .outbox import Lane, Outbox

# Requests whose answer goes on the connection stream even though they name a session.
_ANSWERED_ON_CONNECTION = frozenset({"session/load", "session/resume", "session/fork", "session/delete"})
_ESTABLISHING = frozenset({"session/load", "session/resume"})
MAX_SESSION_STREAMS = 64


def _id_key(request_id: Any) -> str:
    return json.dumps(request_id)  # 1 and "1" are different ids


def _session_of(params: Any) -> str | None:
    if isinstance(params, dict):
        session_id = params.get("sessionId")
        if isinstance(session_id, str):
            return session_id
    return None


@dataclass
class Capture:
    """The answer to a request that the POST returns itself (`initialize`)."""

    done: anyio.Event = field(default_factory=anyio.Event)
    line: bytes = b""


class TooManyStreams(Exception):
    pass


class HttpLanes:
    def __init__(self, outbox: Outbox) -> None:
        self.connection = outbox.lane()
        self._outbox = outbox
        self.sessions: dict[str, Lane] = {}
        self._requests: dict[str, tuple[str, str | None]] = {}  # client request id -> (method, session)
        self._establishing: Counter[str] = Counter()
        self._captures: dict[str, Capture] = {}
        outbox.route = self.route

    def capture(self, request_id: Any) -> Capture:
        capture = self._captures[_id_key(request_id)] = Capture()
        return capture

    def from_client(self, message: dict[str, Any]) -> None:
        """Note a request the client sent, to route its answer."""
        method = message.get("method")
        if not isinstance(method, str) or "id" not in message or not valid_id(message["id"]):
            return  # the agent refuses a request with a bad id, and answers it with a null id: nothing to route
        session_id = _session_of(message.get("params"))
        self._requests[_id_key(message["id"])] = (method, session_id)
        if method in _ESTABLISHING and session_id is not None:
            self._establishing[session_id] += 1

    @property
    def awaiting_answers(self) -> int:
        """Requests of the client whose answers have not gone out yet (tests look)."""
        return len(self._requests)

    def session_lane(self, session_id: str) -> Lane:
        lane = self.sessions.get(session_id)
        if lane is None:
            if len(self.sessions) >= MAX_SESSION_STREAMS:
                raise TooManyStreams(f"at most {MAX_SESSION_STREAMS} session streams per connection")
            lane = self.sessions[session_id] = self._outbox.lane()
        return lane

    def session_detached(self, session_id: str) -> None:
        """The client closed a session's stream: what was waiting there, and what follows, takes the connection's."""
        lane = self.sessions.get(session_id)
        if lane is not None and not lane.is_attached:
            lane.move_to(self.connection)

    def route(self, line: bytes) -> tuple[Lane, str | None] | None:
        try:
            message = json.loads(line)
        except ValueError:
            return self.connection, None
        if not isinstance(message, dict):
            return self.connection, None
        if "method" in message:
            return self._by_session(_session_of(message.get("params")))
        key = _id_key(message.get("id"))
        capture = self._captures.pop(key, None)
        if capture is not None:
            self._requests.pop(key, None)
            capture.line = line
            capture.done.set()
            return None
        method, session_id = self._requests.pop(key, ("", None))
        if method in _ESTABLISHING and session_id is not None:
            self._establishing[session_id] -= 1
            if self._establishing[session_id] <= 0:
                del self._establishing[session_id]
        if method in _ANSWERED_ON_CONNECTION:
            return self.connection, session_id
        return self._by_session(session_id)

    def _by_session(self, session_id: str | None) -> tuple[Lane, str | None]:
        if session_id is None:
            return self.connection, None
        lane = self.sessions.get(session_id)
        if lane is None or not lane.is_attached:
            return self.connection, session_id
        if lane.pending:  # behind what is already waiting there
            return lane, session_id
        if session_id in self._establishing or self.connection.holding(session_id):
            return self.connection, session_id
        return lane, session_id
