"""A scripted model server on 127.0.0.1, for tests, benchmarks and evals: OpenAI and Anthropic wire formats.

Each `POST /v1/chat/completions` (OpenAI-compatible), `POST /v1/responses` (OpenAI's Responses API, see
`responses_wire.py`) or `POST /v1/messages` (Anthropic Messages) takes
the next `Reply` of the script and plays it in that endpoint's format: SSE events (HTTP/1.1, chunked,
so a `cut` is a real protocol error for the client), or one whole response when the request does not
stream; errors come in the endpoint's JSON shape. Every request is recorded. Standard library only;
never writes to stdout.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections import deque
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Self
from urllib.parse import urlsplit

from coder_agent.scripted import anthropic_wire, wire
from coder_agent.scripted.http_handler import MESSAGES_PATHS, POLL_SECONDS, ModelHandler, ModelHTTPServer
from coder_agent.scripted.records import RecordedRequest, context_error, estimated_tokens
from coder_agent.scripted.responses_state import ResponsesState
from coder_agent.scripted.script import (
    HttpErrorStep,
    Reply,
    Script,
    UsageStep,
)

log = logging.getLogger(__name__)


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
        self.stopping = threading.Event()
        self._httpd: ModelHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle
    def start(self) -> Self:
        if self._httpd is not None:
            raise RuntimeError("scripted model server already started")
        self._httpd = ModelHTTPServer(self._address, ModelHandler, self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": POLL_SECONDS},
            name="scripted-model",
            daemon=True,
        )
        self._thread.start()
        log.debug("scripted model server listening on %s", self.url)
        return self

    def stop(self) -> None:
        if self._httpd is None or self.stopping.is_set():
            return
        self.stopping.set()
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
    def record(self, request: RecordedRequest) -> None:
        with self._changed:
            self._requests.append(request)
            self._changed.notify_all()

    def take_reply(self, request: RecordedRequest) -> Reply | None:
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
        if urlsplit(request.path).path.rstrip("/") in MESSAGES_PATHS:
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

    def note_disconnect(self) -> None:
        with self._changed:
            self._disconnects += 1
            self._changed.notify_all()

    def track(self, conn: socket.socket, *, open: bool) -> None:
        with self._changed:
            (self._connections.add if open else self._connections.discard)(conn)
