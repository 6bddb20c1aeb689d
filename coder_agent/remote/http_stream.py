"""ACP over Streamable HTTP on `/acp` (the RFD's profile): POST messages in, SSE streams out, DELETE to end.

- POST `initialize` without `Acp-Connection-Id` opens a connection: 200, the answer as the body, the id in the
  `Acp-Connection-Id` header. Every other POST names its connection and is answered 202 at once; the agent's
  answer comes on a stream. `Acp-Session-Id` is accepted, not required: the session is the one in the message.
- GET with `Accept: text/event-stream` opens the connection's stream, or with `Acp-Session-Id` that session's
  (see `routing`). A second GET for the same stream takes over from the first, which ends. Each event has an
  `id`; a GET with `Last-Event-ID` resumes that stream: what was sent on it after that event, and is still kept,
  comes again first (the message in flight when the last stream broke).
- DELETE ends the connection (its turns are cancelled, its sessions saved and let go).

A POST body counts in the server's inbound budget (`budget`) from before it is read until the agent has taken it.
A refusal of the token closes the TCP connection: it gives an unauthenticated client nothing to hold on to.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import anyio
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

from ..acp.jsonrpc import valid_id
from .budget import Busy, Held
from .connection import ConnectionGone, RemoteConnection
from .hub import Hub, Unavailable
from .outbox import Lane
from .protocols import peer_of
from .routing import HttpLanes, TooManyStreams
from .security import Gate

log = logging.getLogger(__name__)

CONNECTION_HEADER = "Acp-Connection-Id"
SESSION_HEADER = "Acp-Session-Id"
LAST_EVENT_HEADER = "Last-Event-ID"
_CORS_HEADERS = "authorization, content-type, acp-connection-id, acp-session-id, acp-protocol-version"


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status, headers)


class _TooLarge(Exception):
    pass


class HttpEndpoint:
    def __init__(self, hub: Hub, gate: Gate) -> None:
        self._hub = hub
        self._gate = gate

    async def __call__(self, request: Request) -> Response:
        origin = request.headers.get("origin")
        if request.method == "OPTIONS":
            return self._preflight(request)
        denied = self._gate.check(request.headers)
        if denied is not None:
            response: Response = _error(denied.status, denied.message, {"connection": "close"})
        else:
            self._hub.admission.authenticated(peer_of(request.scope))
            if request.method == "POST":
                response = await self._post(request)
            elif request.method == "GET":
                response = self._get(request)
            else:
                response = self._delete(request)
        if origin is not None and denied is None:
            response.headers["access-control-allow-origin"] = origin
            response.headers["access-control-expose-headers"] = CONNECTION_HEADER
            response.headers["vary"] = "Origin"
        return response

    def _preflight(self, request: Request) -> Response:
        """CORS for the origins the gate allows (browsers ask before sending a token)."""
        origin = request.headers.get("origin")
        if origin is None or not self._gate.origin_allowed(origin, request.headers.get("host")):
            return _error(403, "origin not allowed")
        return Response(
            status_code=204,
            headers={
                "access-control-allow-origin": origin,
                "access-control-allow-methods": "GET, POST, DELETE",
                "access-control-allow-headers": _CORS_HEADERS,
                "access-control-max-age": "600",
                "vary": "Origin",
            },
        )

    def _connection(self, request: Request) -> tuple[RemoteConnection, HttpLanes] | Response:
        connection_id = request.headers.get(CONNECTION_HEADER)
        if connection_id is None:
            return _error(400, f"{CONNECTION_HEADER} is missing (POST initialize first)")
        connection = self._hub.connections.get(connection_id)
        lanes = self._hub.http_lanes.get(connection_id)
        if connection is None or lanes is None or connection.close_reason is not None:
            return _error(404, f"unknown or ended connection {connection_id!r}")
        return connection, lanes

    async def _post(self, request: Request) -> Response:
        if not request.headers.get("content-type", "").lower().startswith("application/json"):
            return _error(415, "Content-Type must be application/json")
        limit = self._hub.options.max_message_bytes
        declared = request.headers.get("content-length")
        size = int(declared) if declared is not None and declared.isdigit() else None
        if size is not None and size > limit:
            return _error(413, f"a message may have at most {limit} bytes")
        held = Held(self._hub.budget)
        try:
            await held.take(limit if size is None else size)  # a body of unknown size may be as long as allowed
        except Busy as exc:
            log.warning("a POST waited %g s for room: %s", self._hub.budget.wait, exc)
            return _error(503, f"the server is busy: try again later ({exc})", {"retry-after": "5"})
        try:
            return await self._post_held(request, held)
        finally:
            held.release()  # unless the agent has it: then it lets go once it has taken it

    async def _post_held(self, request: Request, held: Held) -> Response:
        try:
            body = await self._body(request)
        except _TooLarge:
            return _error(413, f"a message may have at most {self._hub.options.max_message_bytes} bytes")
        except ClientDisconnect:
            return Response(status_code=400)
        held.release(held.size - len(body))
        try:
            message: Any = json.loads(body)
        except RecursionError:  # json recurses once per level: a message nested this deep cannot be read here
            return _error(400, "Parse error: the JSON is nested too deeply")
        except ValueError:
            message = None  # the agent answers it with a parse error, as on stdio
        if isinstance(message, list):
            return _error(501, "batch requests are not supported")
        if CONNECTION_HEADER not in request.headers:
            return await self._initialize(body, message, held)
        found = self._connection(request)
        if isinstance(found, Response):
            return found
        connection, lanes = found
        if isinstance(message, dict):
            lanes.from_client(message)
        del message  # not kept while the agent is behind
        try:
            await connection.deliver(body, held.handed_over())
        except ConnectionGone:
            return _error(404, f"connection {connection.id!r} has ended")
        return Response(status_code=202)

    async def _initialize(self, body: bytes, message: Any, held: Held) -> Response:
        if not (isinstance(message, dict) and message.get("method") == "initialize" and "id" in message):
            return _error(400, f"{CONNECTION_HEADER} is missing: the first message of a connection is initialize")
        if not valid_id(message["id"]):
            return _error(400, "initialize needs an id: a string (of at most 256 characters) or an integer")
        try:
            connection, lanes = self._hub.open_http()
        except Unavailable as exc:
            return _error(503, str(exc))
        capture = lanes.capture(message["id"])
        try:
            await connection.deliver(body, held.handed_over())
        except ConnectionGone:
            return _error(503, "the connection ended at once")
        with anyio.move_on_after(self._hub.options.initialize_timeout):
            await capture.done.wait()
        if not capture.done.is_set():
            connection.close("initialize was not answered in time")
            return _error(504, "initialize was not answered in time")
        return Response(capture.line, 200, {CONNECTION_HEADER: connection.id}, media_type="application/json")

    async def _body(self, request: Request) -> bytes:
        limit = self._hub.options.max_message_bytes
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise _TooLarge
            chunks.append(chunk)
        return b"".join(chunks)

    def _get(self, request: Request) -> Response:
        accept = request.headers.get("accept", "")
        if "text/event-stream" not in accept and "*/*" not in accept:
            return _error(406, "Accept must include text/event-stream")
        found = self._connection(request)
        if isinstance(found, Response):
            return found
        connection, lanes = found
        session_id = request.headers.get(SESSION_HEADER)
        try:
            lane = lanes.connection if session_id is None else lanes.session_lane(session_id)
        except TooManyStreams as exc:
            return _error(429, str(exc))

        def detached() -> None:
            if session_id is not None:
                lanes.session_detached(session_id)

        last = request.headers.get(LAST_EVENT_HEADER, "").strip()
        resume = int(last) if last.isdigit() and len(last) < 20 else None  # another server's id: start afresh
        return EventStream(connection, lane, self._hub.options.keepalive, detached, resume)

    def _delete(self, request: Request) -> Response:
        found = self._connection(request)
        if isinstance(found, Response):
            return found
        connection, _ = found
        connection.close("the client ended the connection (DELETE)")
        return Response(status_code=202)


class EventStream(Response):
    """One SSE stream: a lane's messages as events (`id:` its number, `data:` the message), a comment when quiet;
    ends with the connection. `resume`: the client's `Last-Event-ID`."""

    def __init__(
        self,
        connection: RemoteConnection,
        lane: Lane,
        keepalive: float,
        on_detach: Callable[[], None],
        resume: int | None = None,
    ) -> None:
        # Not `Response.__init__`: that would declare an empty body (content-length: 0).
        self.status_code = 200
        self.background = None
        self.raw_headers = [
            (b"content-type", b"text/event-stream"),
            (b"cache-control", b"no-cache"),
            (b"x-accel-buffering", b"no"),  # nginx: pass each event on at once
        ]
        self._connection = connection
        self._lane = lane
        self._keepalive = keepalive
        self._on_detach = on_detach
        self._resume = resume

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        reader = self._lane.attach(self._resume)
        try:
            await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
            async with anyio.create_task_group() as group:

                async def stop_on_disconnect() -> None:
                    while (await receive())["type"] != "http.disconnect":
                        pass
                    group.cancel_scope.cancel()

                async def stop_on_abort() -> None:
                    await self._connection.outbox.aborted.wait()
                    group.cancel_scope.cancel()

                group.start_soon(stop_on_disconnect)
                group.start_soon(stop_on_abort)
                try:
                    await self._stream(reader, send)
                finally:
                    group.cancel_scope.cancel()
        except OSError:  # the client is gone
            pass
        finally:
            if self._lane.detach(reader):
                self._on_detach()

    async def _stream(self, reader: object, send: Send) -> None:
        while True:
            try:
                taken = await self._lane.next(reader, self._keepalive)
            except anyio.EndOfStream:
                break
            frame = b": keepalive\n\n" if taken is None else b"id: %d\ndata: %s\n\n" % taken
            await send({"type": "http.response.body", "body": frame, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
