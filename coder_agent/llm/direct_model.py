"""`Model` for the wires the agent speaks itself: OpenAI Chat Completions and Anthropic Messages, for the whole session.

The route (`wire/routes.py`) says where a call goes and in which dialect; the request is built in `wire/` (the same
bytes the early first call sends, so that call can be taken over), streamed over httpx (or, before httpx is ready,
over the early call's plain transport) and parsed per wire: Chat Completions chunks straight into the accumulator,
Anthropic events first into the same deltas (`anthropic_stream.py`). Retries, errors, usage and cost follow the same
rules as litellm's path (`LiteLLMModel`), which the contract suite checks. Per chunk: one SSE event, one JSON object.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from typing import Any

import anyio

from ..prestart import raw_http
from ..prestart.early_call import EarlyCall
from . import http_client
from .accumulate import StreamAccumulator
from .adopted import AdoptedResponse
from .anthropic_stream import AnthropicDeltas
from .base import Completion, ModelError, ModelEvent
from .errors import (
    ProviderHTTPError,
    ProviderStreamError,
    ProviderUnreachable,
    StreamDropped,
    StreamStalled,
    classify_error,
    no_key_error,
)
from .messages import ChatMessage
from .retry import with_retries
from .wire import model_info
from .wire.config import ModelConfig
from .wire.openai_wire import error_message
from .wire.routes import Route, route_body, route_headers
from .wire.sse import sse_events

log = logging.getLogger(__name__)

_ERROR_BODY_LIMIT = 64 * 1024


class DirectModel:
    def __init__(
        self, config: ModelConfig, route: Route, cache_key: str | None = None, early: EarlyCall | None = None
    ) -> None:
        """`cache_key`: the session's, for the providers that route a conversation to its cache by one; `early`: the
        session's early first call, which its first model call takes over when it sends the same bytes."""
        self.config = config
        self.route = route
        self.cache_key = cache_key
        self.early = early
        self.info = model_info.info(config.model)
        self.name = config.model

    def request(self, messages: Sequence[ChatMessage], tools: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """The body to send."""
        return route_body(self.route, self.config, [m.to_provider() for m in messages], tools, self.cache_key)

    async def stream(
        self, messages: Sequence[ChatMessage], tools: Sequence[dict[str, Any]] = ()
    ) -> AsyncGenerator[ModelEvent, None]:
        body = json.dumps(self.request(messages, tools)).encode()
        if self.route.api_key is None:
            drop_early(self.early, "the model has no key")
            raise no_key_error(self.config.model, self.config.api_base)
        attempts = with_retries(lambda: self._stream_once(body), self._classify, self.config.retry_policy)
        async with aclosing(attempts) as events:
            async for event in events:
                yield event

    def _classify(self, exc: BaseException) -> ModelError:
        return classify_error(exc, self.config.model, self.config.api_base)

    def _headers(self) -> dict[str, str]:
        return route_headers(self.route, self.cache_key)

    async def _stream_once(self, body: bytes) -> AsyncGenerator[ModelEvent, None]:
        early = self._take_early(body)
        if early is not None:
            async with aclosing(self._stream_raw(AdoptedResponse(early.response))) as events:
                async for event in events:
                    yield event
            return
        if not http_client.prepared():
            if self.early is not None and self.early.url == self.route.url:
                # The early call's transport, while httpx is made ready in the background.
                async with aclosing(self._stream_plain(body, self.early.tls)) as events:
                    async for event in events:
                        yield event
                return
            await anyio.to_thread.run_sync(http_client.prepare, abandon_on_cancel=True)  # httpx, off the loop
        import httpx

        client = http_client.client()
        # A server that accepts and never shakes hands costs the connect timeout, not the stall timeout.
        timeout = httpx.Timeout(self.config.timeout, connect=min(raw_http.CONNECT_TIMEOUT, self.config.timeout))
        request = client.build_request("POST", self.route.url, content=body, headers=self._headers(), timeout=timeout)
        try:
            response = await client.send(request, stream=True)
        except httpx.ConnectTimeout as exc:  # not the request's timeout: the connect's own (see above)
            raise ProviderUnreachable(str(exc) or "connection timed out") from exc
        except httpx.TimeoutException:
            raise
        except httpx.TransportError as exc:
            raise ProviderUnreachable(str(exc)) from exc
        acc = StreamAccumulator()
        try:
            if response.status_code >= 400:
                raise await _http_error(response)
            try:
                async for event in self._events(response, acc):
                    yield event
            except httpx.TimeoutException as exc:
                raise StreamStalled(str(exc)) from exc
            except httpx.TransportError as exc:
                raise StreamDropped(str(exc)) from exc
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(2):
                await response.aclose()
        yield self._completion(acc)

    def _take_early(self, body: bytes) -> EarlyCall | None:
        return take_early(self.early, self.route.url, body)

    async def _stream_plain(self, body: bytes, tls: Any) -> AsyncGenerator[ModelEvent, None]:
        """A call over the early first call's transport (`raw_http`): what comes before httpx is ready."""
        headers = self._headers()
        try:
            raw = await anyio.to_thread.run_sync(
                raw_http.post, self.route.url, headers, body, self.config.timeout, tls, abandon_on_cancel=True
            )
        except OSError as exc:
            raise ProviderUnreachable(str(exc)) from exc
        async with aclosing(self._stream_raw(AdoptedResponse(raw))) as events:
            async for event in events:
                yield event

    async def _stream_raw(self, response: AdoptedResponse) -> AsyncGenerator[ModelEvent, None]:
        """The reply of a call over `raw_http`, parsed from its first byte (an early call's included: what it showed
        comes out again, at once, from the bytes it read)."""
        acc = StreamAccumulator()
        try:
            await response.start()
            if response.status_code >= 400:
                raise await _http_error(response)
            async for event in self._events(response, acc):
                yield event
        finally:
            with anyio.CancelScope(shield=True):
                await response.aclose()
        yield self._completion(acc)

    def _completion(self, acc: StreamAccumulator) -> Completion:
        acc.check_complete(acc.finish_reason_seen)
        message, finish_reason, usage = acc.finish()
        if usage is not None:
            cost = self.info.cost(
                usage.prompt_tokens, usage.completion_tokens, usage.cache_read_tokens, usage.cache_write_tokens
            )
            usage = acc.priced(usage, cost)
        return Completion(message=message, finish_reason=finish_reason, usage=usage)

    async def _events(self, response: Any, acc: StreamAccumulator) -> AsyncGenerator[ModelEvent, None]:
        loads = json.loads
        if self.route.wire == "anthropic":
            deltas = AnthropicDeltas()
            async for _name, data in sse_events(response.aiter_bytes()):
                chunk = deltas.chunk(loads(data))
                if chunk is not None:
                    for event in acc.add(chunk):
                        yield event
            return
        async for _name, data in sse_events(response.aiter_bytes()):
            if data == "[DONE]":
                return
            chunk = loads(data)
            if "error" in chunk:  # vLLM, sglang and others report a failure inside the stream
                raise ProviderStreamError(error_message(chunk)[0] or data)
            for event in acc.add(chunk):
                yield event


def take_early(call: EarlyCall | None, url: str, body: bytes) -> EarlyCall | None:
    """The session's early first call, when it sent exactly this request and nobody took it over yet (both adapters'
    first call asks)."""
    if call is None or not call.claim():
        return None
    if call.url != url or call.body != body:
        close_unclaimed(call, f"the turn's first request differs ({len(body)} bytes, not {len(call.body)})")
        return None
    call.adopted = True
    return call


def drop_early(call: EarlyCall | None, why: str) -> None:
    """The session's early first call, if nobody took it over yet, closed: the turn's first call will not (`why`)."""
    if call is not None and call.claim():
        close_unclaimed(call, why)


def close_unclaimed(call: EarlyCall, why: str) -> None:
    """An early first call the session's first model call did not take over: a bug (see `prestart.early_prompt`)."""
    shown = sum(len(text) for _, text in call.shown)
    log.error(
        "the early first call was not taken over: %s; the %d characters it showed are not in the history", why, shown
    )
    call.response.close()


async def error_body(response: Any) -> str:
    """An error response's body as text, read up to `_ERROR_BODY_LIMIT` (a server may send a page, or no end)."""
    raw = b""
    async for part in response.aiter_bytes():
        raw += part
        if len(raw) > _ERROR_BODY_LIMIT:
            break
    return raw.decode(errors="replace").strip()


async def _http_error(response: Any) -> ProviderHTTPError:
    text = await error_body(response)
    try:
        message, kind = error_message(json.loads(text))
    except ValueError:
        message, kind = None, None
    words = message or text or response.reason_phrase
    return ProviderHTTPError(response.status_code, words, dict(response.headers), kind)
