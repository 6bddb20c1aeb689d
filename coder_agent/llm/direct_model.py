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

from . import http_client
from .accumulate import StreamAccumulator
from .anthropic_request import NeedsLiteLLM, anthropic_body, max_tokens_for
from .anthropic_stream import AnthropicDeltas
from .base import Completion, ModelError, ModelEvent
from .config import ModelConfig
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
from .openai_wire import error_message, openai_body, openai_headers
from .price_map import PriceMap
from .retry import with_retries
from .routes import Route
from .sse import sse_events

log = logging.getLogger(__name__)

ANTHROPIC_VERSION = "2023-06-01"
_ERROR_BODY_LIMIT = 64 * 1024


class DirectModel:
    def __init__(self, config: ModelConfig, route: Route, prices: PriceMap) -> None:
        self.config = config
        self.route = route
        self.prices = prices
        self.name = config.model

    def request(self, messages: Sequence[ChatMessage], tools: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """The body to send; raises `NeedsLiteLLM` when it is not one we convert exactly as litellm would."""
        provider_messages = [m.to_provider() for m in messages]
        route, config = self.route, self.config
        if route.wire == "anthropic":
            if config.reasoning_effort:
                raise NeedsLiteLLM("Anthropic thinking budgets are litellm's to map")
            max_tokens = config.max_tokens or max_tokens_for(route.model, self.prices)
            return anthropic_body(route.model, provider_messages, tools, max_tokens)
        return openai_body(
            route.model,
            provider_messages,
            tools,
            max_tokens=config.max_tokens,
            reasoning_effort=config.reasoning_effort if route.send_reasoning_effort else None,
            extra=route.body,
            drop=("thinking_blocks",) if route.drop_thinking_blocks else (),
        )

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
        key = self.route.api_key or ""
        if self.route.wire == "anthropic":
            return {
                "x-api-key": key,
                "anthropic-version": ANTHROPIC_VERSION,
                "content-type": "application/json",
                "accept": "application/json",
            }
        return {**openai_headers(key), **self.route.headers}

    async def _stream_once(self, body: bytes) -> AsyncGenerator[ModelEvent, None]:
        if not http_client.prepared():  # imports httpx, off the event loop
            await anyio.to_thread.run_sync(http_client.prepare)
        import httpx

        client = http_client.client()
        timeout = httpx.Timeout(self.config.timeout)
        request = client.build_request("POST", self.route.url, content=body, headers=self._headers(), timeout=timeout)
        try:
            response = await client.send(request, stream=True)
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
        acc.check_complete(acc.finish_reason_seen)
        message, finish_reason, usage = acc.finish()
        if usage is not None:
            cost = self.prices.cost(self.route.model, self.route.provider, usage.prompt_tokens, usage.completion_tokens)
            usage = acc.priced(usage, cost)
        yield Completion(message=message, finish_reason=finish_reason, usage=usage)

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
