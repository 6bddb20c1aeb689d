"""The scripted model server's HTTP side: one connection's requests, each reply played in its endpoint's format
(SSE events over chunked HTTP/1.1, one JSON body, or an error), stalls and cuts included. `server.py` owns the
script and the record. Standard library only; never writes to stdout."""

from __future__ import annotations

import json
import logging
import select
import socket
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from coder_agent.scripted import anthropic_wire, responses_wire, wire
from coder_agent.scripted.records import EXHAUSTED_MESSAGE, RecordedRequest, estimated_tokens
from coder_agent.scripted.script import (
    CutStep,
    EmptyBodyStep,
    EndStep,
    HttpErrorStep,
    Reply,
    SleepStep,
)
from coder_agent.scripted.wire import Control, error_json

if TYPE_CHECKING:
    import threading

    from coder_agent.scripted.responses_state import ResponsesState

log = logging.getLogger(__name__)


_COMPLETION_PATHS = ("/v1/chat/completions", "/chat/completions")
MESSAGES_PATHS = ("/v1/messages", "/messages")  # Anthropic's Messages API
_RESPONSES_PATHS = ("/v1/responses", "/responses")  # OpenAI's Responses API
_MODELS_PATHS = ("/v1/models", "/models")
POLL_SECONDS = 0.05  # how often a stall checks for a stopping server or a vanished client


class _ClientGone(Exception):
    """The client closed its end of the connection."""


class _Stopped(Exception):
    """The server is shutting down."""


class Owner(Protocol):
    """What the HTTP side needs of `server.ScriptedModelServer`: the script, the record, the stop."""

    model: str
    listed_models: list[str]
    context_limit: int | None
    responses: ResponsesState
    stopping: threading.Event

    @property
    def requests(self) -> list[RecordedRequest]: ...

    def record(self, request: RecordedRequest) -> None: ...
    def take_reply(self, request: RecordedRequest) -> Reply | None: ...
    def note_disconnect(self) -> None: ...
    def track(self, conn: socket.socket, *, open: bool) -> None: ...


class ModelHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[ModelHandler], owner: Owner) -> None:
        self.owner = owner
        super().__init__(address, handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):  # a client hanging up between requests
            log.debug("scripted model server: %s hung up", client_address)
        else:
            log.exception("scripted model server: error while handling %s", client_address)


class ModelHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # TCP_NODELAY, as the servers of real providers stream: with Nagle on, the first event of a reply that starts
    # while the last one's end is still unacknowledged waited for the client's delayed ACK (40 ms on Linux).
    disable_nagle_algorithm = True
    server: ModelHTTPServer
    anthropic = False  # the request came to the Anthropic Messages endpoint
    responses_request: responses_wire.Request | None = None  # the request came to the Responses endpoint

    def setup(self) -> None:
        super().setup()
        self.server.owner.track(self.connection, open=True)

    def finish(self) -> None:
        self.server.owner.track(self.connection, open=False)
        super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s - " + format, self.address_string(), *args)

    def do_GET(self) -> None:
        if urlsplit(self.path).path.rstrip("/") not in _MODELS_PATHS:
            return self._send_json(404, error_json(f"no route for GET {self.path}", 404))
        models = [
            {"id": name, "object": "model", "created": 0, "owned_by": "scripted"}
            for name in self.server.owner.listed_models
        ]
        self._send_json(200, {"object": "list", "data": models})

    def do_POST(self) -> None:
        owner = self.server.owner
        try:
            path = urlsplit(self.path).path.rstrip("/")
            if path not in _COMPLETION_PATHS + MESSAGES_PATHS + _RESPONSES_PATHS:
                return self._send_json(404, error_json(f"no route for POST {self.path}", 404))
            self.anthropic = path in MESSAGES_PATHS
            self.responses_request = None  # a connection may carry requests to every endpoint
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"null")
            if not isinstance(body, dict):
                return self._send_json(400, error_json("scripted model: the body must be a JSON object", 400))
            headers = {name.lower(): value for name, value in self.headers.items()}
            request = RecordedRequest("POST", self.path, headers, body)
            if path in _RESPONSES_PATHS:  # checked as OpenAI checks it, before a reply is taken
                refusal, cached, number = owner.responses.admit(body, owner.context_limit, estimated_tokens(body))
                if refusal is not None:
                    owner.record(request)
                    return self._send_json(refusal.status, refusal.body)
                self.responses_request = responses_wire.Request(
                    str(body.get("model") or owner.model), number, cached, owner.responses.reasoning_for(body)
                )
            reply = owner.take_reply(request)
            if reply is None:
                log.error("%s (request #%d)", EXHAUSTED_MESSAGE, len(owner.requests))
                return self._send_http_error(HttpErrorStep(status=500, message=EXHAUSTED_MESSAGE))
            self._play(reply, body, headers)
        except json.JSONDecodeError as exc:
            self._send_json(400, error_json(f"scripted model: invalid JSON body: {exc}", 400))
        except _ClientGone:
            log.debug("scripted model: client went away mid-reply")
            owner.note_disconnect()
            self.close_connection = True
        except _Stopped:
            self.close_connection = True

    def _play(self, reply: Reply, body: dict[str, Any], headers: dict[str, str]) -> None:
        model = str(body.get("model") or self.server.owner.model)
        if (error := reply.http_error) is not None:
            return self._send_http_error(error, headers)
        if reply.steps and isinstance(reply.steps[0], EmptyBodyStep):
            return self._send_empty_body()
        if not body.get("stream"):
            for step in reply.steps:
                if isinstance(step, SleepStep):
                    self._pause(step.seconds)
                elif isinstance(step, CutStep):
                    return self._cut()
            if self.responses_request is not None:
                return self._send_json(200, responses_wire.response_body(reply, self.responses_request))
            whole = anthropic_wire.message_body if self.anthropic else wire.completion_body
            return self._send_json(200, whole(reply, model=model))
        started = False  # headers go out with the first event, so a leading sleep holds them back
        for event in self._events(reply, body, model):
            if isinstance(event, SleepStep):
                self._pause(event.seconds)
                continue
            if isinstance(event, CutStep):
                return self._cut()
            if not started:
                self._start_event_stream()
                started = True
            if isinstance(event, EndStep):
                return self._write(b"0\r\n\r\n")  # a clean end of the body, without the stream's end marker
            self._write_chunk(event)
        if not started:
            self._start_event_stream()
        if not self.anthropic and self.responses_request is None:
            self._write_chunk(b"data: [DONE]\n\n")
        self._write(b"0\r\n\r\n")

    def _events(self, reply: Reply, body: dict[str, Any], model: str) -> Iterator[bytes | Control]:
        """The reply's SSE events, encoded, with its controls in place."""
        if self.responses_request is not None:
            yield from responses_wire.encode(responses_wire.stream_events(reply, self.responses_request))
            return
        if self.anthropic:
            for item in anthropic_wire.stream_events(reply, model=model):
                if isinstance(item, tuple):
                    name, payload = item
                    yield f"event: {name}\ndata: {json.dumps(payload)}\n\n".encode()
                else:
                    yield item
            return
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        for event in wire.stream_events(reply, model=model, include_usage=include_usage):
            yield event if isinstance(event, Control) else f"data: {json.dumps(event)}\n\n".encode()

    def _send_http_error(self, error: HttpErrorStep, request_headers: Mapping[str, str] | None = None) -> None:
        headers = {} if error.retry_after is None else {"Retry-After": f"{error.retry_after:g}"}
        errors = anthropic_wire.error_json if self.anthropic else error_json
        message = error.message_for(request_headers or {})
        self._send_json(error.status, errors(message, error.status, error.error_type), headers)

    def _send_empty_body(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "0")
        self._guarded(self.end_headers)

    def _send_json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        headers = {"Content-Type": "application/json", "Content-Length": str(len(data)), **(headers or {})}
        for name, value in headers.items():
            self.send_header(name, value)
        self._guarded(self.end_headers)
        self._write(data)

    def _start_event_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self._guarded(self.end_headers)

    def _write_chunk(self, payload: bytes) -> None:
        self._write(b"%X\r\n%s\r\n" % (len(payload), payload))

    def _write(self, data: bytes) -> None:
        self._guarded(lambda: self.wfile.write(data))

    def _guarded(self, write: Callable[[], object]) -> None:
        """Run a socket write, turning a vanished client or a stopping server into our exceptions."""
        if self.server.owner.stopping.is_set():
            raise _Stopped
        if self._peer_closed():
            raise _ClientGone
        try:
            write()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise (_Stopped if self.server.owner.stopping.is_set() else _ClientGone) from exc

    def _pause(self, seconds: float) -> None:
        """A stall that ends early when the server stops or the client hangs up."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if self.server.owner.stopping.wait(min(left, POLL_SECONDS)):
                raise _Stopped
            if self._peer_closed():
                raise _ClientGone

    def _peer_closed(self) -> bool:
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def _cut(self) -> None:
        """Drop the connection mid-reply: the client sees an unterminated chunked body."""
        log.debug("scripted model: cutting the connection")
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
