"""A scripted model server on 127.0.0.1, for tests, benchmarks and evals: OpenAI and Anthropic wire formats.

Each `POST /v1/chat/completions` (OpenAI-compatible), `POST /v1/responses` (OpenAI's Responses API, see
`responses_wire.py`) or `POST /v1/messages` (Anthropic Messages) takes
the next `Reply` of the script and plays it in that endpoint's format: SSE events (HTTP/1.1, chunked,
so a `cut` is a real protocol error for the client), or one whole response when the request does not
stream; errors come in the endpoint's JSON shape. Every request is recorded. Standard library only;
never writes to stdout.
"""

from __future__ import annotations

import json
import logging
import select
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self
from urllib.parse import urlsplit

from coder_agent.scripted import anthropic_wire, responses_wire, wire
from coder_agent.scripted.responses_state import ResponsesState
from coder_agent.scripted.script import (
    CutStep,
    EmptyBodyStep,
    EndStep,
    HttpErrorStep,
    Reply,
    Script,
    SleepStep,
    UsageStep,
)
from coder_agent.scripted.wire import Control, error_json

log = logging.getLogger(__name__)

EXHAUSTED_MESSAGE = "scripted model: no reply left in the script"
_COMPLETION_PATHS = ("/v1/chat/completions", "/chat/completions")
_MESSAGES_PATHS = ("/v1/messages", "/messages")  # Anthropic's Messages API
_RESPONSES_PATHS = ("/v1/responses", "/responses")  # OpenAI's Responses API
_MODELS_PATHS = ("/v1/models", "/models")
_POLL_SECONDS = 0.05  # how often a stall checks for a stopping server or a vanished client


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: dict[str, Any]


class _ClientGone(Exception):
    """The client closed its end of the connection."""


class _Stopped(Exception):
    """The server is shutting down."""


class ScriptedModelServer:
    """Serves scripted replies in order on a background thread; see the module docstring."""

    def __init__(
        self,
        script: Script | Iterable[Reply] | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        model: str = "scripted",
        listed_models: Iterable[str] = (),
        context_limit: int | None = None,
        count_prompt_tokens: bool = False,
        respond: Callable[[RecordedRequest], Reply | None] | None = None,
        cache: bool = False,
        cache_min_tokens: int = anthropic_wire.ANTHROPIC_CACHE_MIN_TOKENS,
    ) -> None:
        """`context_limit`: requests estimated above this many tokens get the provider's context-window error
        (OpenAI's words) and take no reply. `count_prompt_tokens`: usage reports the request's estimated tokens
        as its prompt tokens. `respond`: asked first for each request; its reply, if any, is played instead of
        the script's next one (a model that answers what it is asked, e.g. for summaries). `cache`: the server
        caches prompts as each provider does (`wire.cached_tokens`: OpenAI's automatic prefix matching;
        `anthropic_wire.cache_usage`: Anthropic's breakpoints, from `cache_min_tokens` on), and the usage of every
        reply says what its request read from the cache and wrote to it (`cache_log` keeps them)."""
        script = script if isinstance(script, Script) else Script(replies=list(script or []))
        self.model = model
        self.listed_models = [model, *listed_models]  # what GET /v1/models lists
        self.context_limit = context_limit
        self.count_prompt_tokens = count_prompt_tokens
        self.respond = respond
        self.cache = cache
        self.cache_min_tokens = cache_min_tokens
        self.cache_log: list[UsageStep] = []  # with `cache`: each request's prompt tokens, cache reads and writes
        self._prompts: deque[str] = deque(maxlen=256)  # the Chat Completions prompts seen (OpenAI's cache)
        self._written: set[str] = set()  # the prefixes Anthropic requests wrote to the cache
        self._address = (host, port)
        self._queue = deque(script.replies)
        self._default = script.default
        self.responses = ResponsesState()  # what the Responses endpoint remembers across requests
        self._changed = threading.Condition()
        self._requests: list[RecordedRequest] = []
        self._disconnects = 0
        self._connections: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle
    def start(self) -> Self:
        if self._httpd is not None:
            raise RuntimeError("scripted model server already started")
        self._httpd = _HTTPServer(self._address, _Handler, self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": _POLL_SECONDS},
            name="scripted-model",
            daemon=True,
        )
        self._thread.start()
        log.debug("scripted model server listening on %s", self.url)
        return self

    def stop(self) -> None:
        if self._httpd is None or self._stopping.is_set():
            return
        self._stopping.set()
        self._httpd.shutdown()
        with self._changed:
            connections = list(self._connections)
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("scripted model server not started")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The api_base to hand to litellm for OpenAI-compatible models: `http://HOST:PORT/v1`."""
        return f"http://{self._address[0]}:{self.port}/v1"

    @property
    def anthropic_url(self) -> str:
        """The api_base for `anthropic/...` models (litellm appends `/v1/messages`): `http://HOST:PORT`."""
        return f"http://{self._address[0]}:{self.port}"

    # the script and what happened
    def enqueue(self, *replies: Reply) -> None:
        with self._changed:
            self._queue.extend(replies)

    @property
    def pending(self) -> int:
        """Replies not yet served (the default reply not counted)."""
        with self._changed:
            return len(self._queue)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._changed:
            return list(self._requests)

    @property
    def disconnects(self) -> int:
        """Clients that went away while a reply was still being played."""
        with self._changed:
            return self._disconnects

    def wait_for_requests(self, n: int, timeout: float) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: len(self._requests) >= n, timeout)

    def wait_disconnect(self, timeout: float, count: int = 1) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: self._disconnects >= count, timeout)

    # used by the request handler threads
    def _record(self, request: RecordedRequest) -> None:
        with self._changed:
            self._requests.append(request)
            self._changed.notify_all()

    def _take_reply(self, request: RecordedRequest) -> Reply | None:
        tokens = estimated_tokens(request.body)
        if self.context_limit is not None and tokens > self.context_limit:
            with self._changed:
                self._requests.append(request)
                self._changed.notify_all()
            return Reply(steps=[HttpErrorStep(status=400, message=context_error(self.context_limit, tokens))])
        reply = self.respond(request) if self.respond is not None else None
        with self._changed:
            self._requests.append(request)
            self._changed.notify_all()
            if reply is None:
                reply = self._queue.popleft() if self._queue else self._default
        if reply is not None and self.cache:
            reply = self._cached(request, reply)
        elif reply is not None and self.count_prompt_tokens:
            steps = [
                step.model_copy(update={"prompt_tokens": tokens, "cache_read_tokens": 0, "cache_creation_tokens": 0})
                if isinstance(step, UsageStep)
                else step
                for step in reply.steps
            ]
            reply = reply.model_copy(update={"steps": steps})
        return reply

    def _cached(self, request: RecordedRequest, reply: Reply) -> Reply:
        """The reply, its usage saying what the request read from the provider's cache and wrote to it."""
        if urlsplit(request.path).path.rstrip("/") in _MESSAGES_PATHS:
            try:
                with self._changed:
                    usage = anthropic_wire.cache_usage(request.body, self._written, self.cache_min_tokens)
            except ValueError as exc:  # more breakpoints than Anthropic takes: its 400
                return Reply(steps=[HttpErrorStep(status=400, message=str(exc))])
        else:
            prompt = wire.prompt_text(request.body)
            with self._changed:
                read = wire.cached_tokens(prompt, self._prompts)
                self._prompts.append(prompt)
            usage = UsageStep(prompt_tokens=max(len(prompt) // 4, read), cache_read_tokens=read)
        with self._changed:
            self.cache_log.append(usage)
        steps = list(reply.steps) if any(isinstance(s, UsageStep) for s in reply.steps) else [*reply.steps, UsageStep()]
        steps = [
            step.model_copy(update={"prompt_tokens": usage.prompt_tokens, "cache_read_tokens": usage.cache_read_tokens,
                                    "cache_creation_tokens": usage.cache_creation_tokens})
            if isinstance(step, UsageStep) else step
            for step in steps
        ]  # fmt: skip
        return reply.model_copy(update={"steps": steps})

    def _note_disconnect(self) -> None:
        with self._changed:
            self._disconnects += 1
            self._changed.notify_all()

    def _track(self, conn: socket.socket, *, open: bool) -> None:
        with self._changed:
            (self._connections.add if open else self._connections.discard)(conn)


def estimated_tokens(body: dict[str, Any]) -> int:
    """A request's size in tokens, roughly as providers count (4 characters a token): messages or input, system or
    instructions, tools."""
    parts = (body.get("messages"), body.get("system"), body.get("tools"), body.get("input"), body.get("instructions"))
    return sum(len(json.dumps(part, ensure_ascii=False)) for part in parts if part) // 4


def context_error(limit: int, tokens: int) -> str:
    """What OpenAI answers (400) to a request over the model's context window; litellm recognises the words."""
    return (
        f"This model's maximum context length is {limit} tokens. However, your messages resulted in {tokens} "
        "tokens. Please reduce the length of the messages."
    )


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[_Handler], owner: ScriptedModelServer) -> None:
        self.owner = owner
        super().__init__(address, handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):  # a client hanging up between requests
            log.debug("scripted model server: %s hung up", client_address)
        else:
            log.exception("scripted model server: error while handling %s", client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # TCP_NODELAY, as the servers of real providers stream: with Nagle on, the first event of a reply that starts
    # while the last one's end is still unacknowledged waited for the client's delayed ACK (40 ms on Linux).
    disable_nagle_algorithm = True
    server: _HTTPServer
    anthropic = False  # the request came to the Anthropic Messages endpoint
    responses_request: responses_wire.Request | None = None  # the request came to the Responses endpoint

    def setup(self) -> None:
        super().setup()
        self.server.owner._track(self.connection, open=True)

    def finish(self) -> None:
        self.server.owner._track(self.connection, open=False)
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
            if path not in _COMPLETION_PATHS + _MESSAGES_PATHS + _RESPONSES_PATHS:
                return self._send_json(404, error_json(f"no route for POST {self.path}", 404))
            self.anthropic = path in _MESSAGES_PATHS
            self.responses_request = None  # a connection may carry requests to every endpoint
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"null")
            if not isinstance(body, dict):
                return self._send_json(400, error_json("scripted model: the body must be a JSON object", 400))
            headers = {name.lower(): value for name, value in self.headers.items()}
            request = RecordedRequest("POST", self.path, headers, body)
            if path in _RESPONSES_PATHS:  # checked as OpenAI checks it, before a reply is taken
                refusal, cached, number = owner.responses.admit(body, owner.context_limit, estimated_tokens(body))
                if refusal is not None:
                    owner._record(request)
                    return self._send_json(refusal.status, refusal.body)
                self.responses_request = responses_wire.Request(
                    str(body.get("model") or owner.model), number, cached, owner.responses.reasoning_for(body)
                )
            reply = owner._take_reply(request)
            if reply is None:
                log.error("%s (request #%d)", EXHAUSTED_MESSAGE, len(owner.requests))
                return self._send_http_error(HttpErrorStep(status=500, message=EXHAUSTED_MESSAGE))
            self._play(reply, body, headers)
        except json.JSONDecodeError as exc:
            self._send_json(400, error_json(f"scripted model: invalid JSON body: {exc}", 400))
        except _ClientGone:
            log.debug("scripted model: client went away mid-reply")
            owner._note_disconnect()
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
        if self.server.owner._stopping.is_set():
            raise _Stopped
        if self._peer_closed():
            raise _ClientGone
        try:
            write()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise (_Stopped if self.server.owner._stopping.is_set() else _ClientGone) from exc

    def _pause(self, seconds: float) -> None:
        """A stall that ends early when the server stops or the client hangs up."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if self.server.owner._stopping.wait(min(left, _POLL_SECONDS)):
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
