"""`Model` without litellm: one streamed completion over httpx, for the routes in `routes.py`.

Same seam, same events, same retry and error rules, same usage and cost as `LiteLLMModel`; the contract
tests run every scripted scenario through both. Per chunk it parses one SSE event and one JSON object.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from typing import Any

import anyio

from ..prestart import early_call, raw_http
from ..prestart.early_call import EarlyCall
from . import http_client
from .accumulate import StreamAccumulator
from .adopted import AdoptedResponse
from .anthropic_stream import AnthropicDeltas
from .base import Completion, ModelError, ModelEvent, TextDelta
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
from .wire.config import ModelConfig
from .wire.openai_wire import error_message
from .wire.price_map import PriceMap
from .wire.routes import Route, route_body, route_headers
from .wire.sse import sse_events

log = logging.getLogger(__name__)

_ERROR_BODY_LIMIT = 64 * 1024


class DirectModel:
    def __init__(self, config: ModelConfig, route: Route, prices: PriceMap) -> None:
        self.config = config
        self.route = route
        self.prices = prices
        self.name = config.model

    def request(self, messages: Sequence[ChatMessage], tools: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """The body to send; raises `NeedsLiteLLM` when it is not one we convert exactly as litellm would."""
        return route_body(self.route, self.config, self.prices, [m.to_provider() for m in messages], tools)

    async def stream(
        self, messages: Sequence[ChatMessage], tools: Sequence[dict[str, Any]] = ()
    ) -> AsyncGenerator[ModelEvent, None]:
        async with aclosing(self.stream_request(self.request(messages, tools))) as events:
            async for event in events:
                yield event

    async def stream_request(self, request: dict[str, Any]) -> AsyncGenerator[ModelEvent, None]:
        """Stream the reply to a body built by `request`."""
        body = json.dumps(request).encode()
        if self.route.api_key is None:
            raise no_key_error(self.config.model, self.config.api_base)
        attempts = with_retries(lambda: self._stream_once(body), self._classify, self.config.retry_policy)
        async with aclosing(attempts) as events:
            async for event in events:
                yield event

    def _classify(self, exc: BaseException) -> ModelError:
        return classify_error(exc, self.config.model, self.config.api_base)

    def _headers(self) -> dict[str, str]:
        return route_headers(self.route)

    async def _stream_once(self, body: bytes) -> AsyncGenerator[ModelEvent, None]:
        adopted = self._take_early(body)
        if adopted is not None:
            async with aclosing(self._stream_adopted(*adopted)) as events:
                async for event in events:
                    yield event
            return
        if not http_client.prepared():
            plain, tls = early_call.plain_transport(self.route.url)
            if plain:  # the early first call's transport, while httpx is made ready in the background
                async with aclosing(self._stream_plain(body, tls)) as events:
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

    def _take_early(self, body: bytes) -> tuple[AdoptedResponse, EarlyCall] | None:
        """The early first call (`early_call`), when it sent exactly this request."""
        call = early_call.claim() if early_call.pending() else None
        if call is None:
            return None
        if call.url != self.route.url or call.body != body:
            close_unclaimed(call, f"the turn's first request differs ({len(body)} bytes, not {len(call.body)})")
            return None
        return AdoptedResponse(call.response), call

    async def _stream_plain(self, body: bytes, tls: Any) -> AsyncGenerator[ModelEvent, None]:
        """A call over the early first call's transport (`raw_http`): what comes before httpx is ready."""
        headers = self._headers()
        try:
            raw = await anyio.to_thread.run_sync(
                raw_http.post, self.route.url, headers, body, self.config.timeout, tls, abandon_on_cancel=True
            )
        except OSError as exc:
            raise ProviderUnreachable(str(exc)) from exc
        async with aclosing(self._stream_adopted(AdoptedResponse(raw), None)) as events:
            async for event in events:
                yield event

    async def _stream_adopted(
        self, response: AdoptedResponse, call: EarlyCall | None
    ) -> AsyncGenerator[ModelEvent, None]:
        """The reply of a call over `raw_http`. For the early call's, the text it showed comes out first, at once
        (before anything can cancel the turn: the user saw it, so the turn keeps it), marked as shown
        (`TextDelta.shown`); the parse from the start then checks it and goes on after it."""
        acc = StreamAccumulator()
        shown = list(call.shown) if call is not None else []
        for text in shown:
            assert call is not None
            yield TextDelta(text, shown=call.message_id)
        seen = 0
        try:
            await response.start()
            if response.status_code >= 400:
                raise await _http_error(response)
            async for event in self._events(response, acc):
                if seen < len(shown) and isinstance(event, TextDelta):
                    if event.text != shown[seen]:
                        log.error("the early first call showed %r where the reply has %r", shown[seen], event.text)
                    seen += 1
                    continue
                yield event
        finally:
            with anyio.CancelScope(shield=True):
                await response.aclose()
        yield self._completion(acc)

    def _completion(self, acc: StreamAccumulator) -> Completion:
        acc.check_complete(acc.finish_reason_seen)
        message, finish_reason, usage = acc.finish()
        if usage is not None:
            cost = self.prices.cost(self.route.model, self.route.provider, usage.prompt_tokens, usage.completion_tokens)
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


def close_unclaimed(call: EarlyCall, why: str) -> None:
    """An early first call the turn's first model call did not take over: a bug (see `server.early_prompt`)."""
    shown = sum(map(len, call.shown))
    log.error(
        "the early first call was not taken over: %s; the %d characters it showed are not in the history", why, shown
    )
    call.response.close()


def discard_early(why: str) -> None:
    """Close the early first call if one waits: the turn's first model call does not take the direct path."""
    call = early_call.claim()
    if call is not None:
        close_unclaimed(call, why)


async def _http_error(response: Any) -> ProviderHTTPError:
    raw = b""
    async for part in response.aiter_bytes():
        raw += part
        if len(raw) > _ERROR_BODY_LIMIT:
            break
    text = raw.decode(errors="replace").strip()
    try:
        message, kind = error_message(json.loads(text))
    except ValueError:
        message, kind = None, None
    words = message or text or response.reason_phrase
    return ProviderHTTPError(response.status_code, words, dict(response.headers), kind)
