"""`Model` on OpenAI's Responses API, for GPT-5 and o-series models, for the whole session, without litellm.

The request is `wire.responses_request`'s (reasoning kept across turns by sending back each reasoning item with
its encrypted content, the session's reasoning effort, a prompt cache key per session); the stream is read by
`responses_stream.ResponsesReader`; retries, errors and their words are the other paths' (`retry`, `errors`),
and usage is priced with the cached tokens at their own rate (`wire.cache_pricing`). Per event it parses one SSE
event and one JSON object, as the direct path does. `tests/llm/test_responses_contract.py` compares all of it
with litellm's Responses bridge.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing
from typing import Any

import anyio

from ..prestart import early_call, raw_http
from ..prestart.early_call import EarlyCall
from . import cache_key, http_client
from .adopted import AdoptedResponse
from .base import Completion, ModelError, ModelEvent, TextDelta, Usage
from .errors import (
    ProviderHTTPError,
    ProviderUnreachable,
    StreamDropped,
    StreamStalled,
    classify_error,
    no_key_error,
)
from .messages import AssistantMessage, ChatMessage
from .responses_stream import CONTEXT_WINDOW_CODE, ResponsesReader
from .retry import with_retries
from .wire import price_map
from .wire.cache_pricing import cost_with_cache
from .wire.config import ModelConfig
from .wire.price_map import PriceMap
from .wire.responses_route import ResponsesRoute, responses_name, responses_route
from .wire.sse import sse_events

log = logging.getLogger(__name__)

_ERROR_BODY_LIMIT = 64 * 1024
# (url, model) whose organisation may not have its reasoning summarised (OpenAI asks to verify it first): asked
# once, then never again in this process.
_NO_SUMMARY: set[tuple[str, str]] = set()


class ResponsesHTTPError(ProviderHTTPError):
    """An HTTP error with OpenAI's `code` and `param` besides its message and type."""

    def __init__(self, status: int, message: str, headers: Any, kind: str | None, code: Any, param: Any) -> None:
        super().__init__(status, message, headers, kind)
        self.code = code if isinstance(code, str) else None
        self.param = param if isinstance(param, str) else None


def provider_form(message: ChatMessage) -> dict[str, Any]:
    """A message as the request builder reads it: the provider form, and an assistant's reasoning items."""
    form = message.to_provider()
    if isinstance(message, AssistantMessage) and message.reasoning_items:
        form["reasoning_items"] = message.reasoning_items
    return form


class ResponsesModel:
    def __init__(self, config: ModelConfig, route: ResponsesRoute) -> None:
        self.config = config
        self.route = route
        self.name = config.model

    def request(
        self, messages: Sequence[ChatMessage], tools: Sequence[dict[str, Any]], summary: bool = True
    ) -> dict[str, Any]:
        route = self.route
        return route.body(
            self.config,
            [provider_form(message) for message in messages],
            tools,
            cache_key=cache_key.current(),
            summary=summary and (route.url, route.model) not in _NO_SUMMARY,
        )

    async def stream(
        self, messages: Sequence[ChatMessage], tools: Sequence[dict[str, Any]] = ()
    ) -> AsyncGenerator[ModelEvent, None]:
        if self.route.api_key is None:
            raise no_key_error(self.config.model, self.config.api_base)

        def body(summary: bool) -> bytes:
            return json.dumps(self.request(messages, tools, summary)).encode()

        attempts = with_retries(lambda: self._stream_once(body), self._classify, self.config.retry_policy)
        async with aclosing(attempts) as events:
            async for event in events:
                yield event

    def _classify(self, exc: BaseException) -> ModelError:
        error = classify_error(exc, self.config.model, self.config.api_base)
        code = getattr(exc, "code", None)
        if code == CONTEXT_WINDOW_CODE and not error.context_window:
            # litellm does not know OpenAI's code for it (the Responses API's words differ from Chat Completions'):
            # said so here, the turn compacts the conversation instead of failing.
            detail = str(getattr(exc, "message", None) or exc)
            return ModelError(
                f"The conversation no longer fits {self.config.model}'s context window: {detail}",
                status=error.status,
                context_window=True,
            )
        return error

    async def _stream_once(self, body: Callable[[bool], bytes]) -> AsyncGenerator[ModelEvent, None]:
        sent = body(True)
        early = self._take_early(sent)
        try:
            calls = self._post(sent) if early is None else self._stream_adopted(early)
            async with aclosing(calls) as events:
                async for event in events:
                    yield event
        except ResponsesHTTPError as exc:
            if not _summary_refused(exc) or sent == body(False):
                raise
            # An organisation OpenAI has not verified may not have the thinking summarised: go on without it.
            log.warning("%s: %s; going on without the reasoning summary", self.config.model, exc.message)
            _NO_SUMMARY.add((self.route.url, self.route.model))
            async with aclosing(self._post(body(False))) as events:
                async for event in events:
                    yield event

    async def _post(self, body: bytes) -> AsyncGenerator[ModelEvent, None]:
        if not http_client.prepared():
            await anyio.to_thread.run_sync(http_client.prepare, abandon_on_cancel=True)  # httpx, off the loop
        import httpx

        client = http_client.client()
        # A server that accepts and never shakes hands costs the connect timeout, not the stall timeout.
        timeout = httpx.Timeout(self.config.timeout, connect=min(raw_http.CONNECT_TIMEOUT, self.config.timeout))
        headers = self.route.request_headers()
        request = client.build_request("POST", self.route.url, content=body, headers=headers, timeout=timeout)
        try:
            response = await client.send(request, stream=True)
        except httpx.ConnectTimeout as exc:
            raise ProviderUnreachable(str(exc) or "connection timed out") from exc
        except httpx.TimeoutException:
            raise
        except httpx.TransportError as exc:
            raise ProviderUnreachable(str(exc)) from exc
        reader = ResponsesReader()
        try:
            if response.status_code >= 400:
                raise await _http_error(response)
            # Read to the end of the body (the connection then serves the next call), but a failure after the
            # terminal event loses nothing of the reply.
            try:
                async for event in _events(response, reader, []):
                    yield event
            except httpx.TimeoutException as exc:
                if reader.finish_reason is None:
                    raise StreamStalled(str(exc)) from exc
            except httpx.TransportError as exc:
                if reader.finish_reason is None:
                    raise StreamDropped(str(exc)) from exc
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(2):
                await response.aclose()
        yield self._completion(reader)

    def _take_early(self, body: bytes) -> EarlyCall | None:
        """The early first call (`prestart.early_call`), when it sent exactly this request."""
        call = early_call.claim() if early_call.pending() else None
        if call is None:
            return None
        if call.url != self.route.url or call.body != body:
            shown = sum(map(len, call.shown))
            log.error(
                "the early first call was not taken over: the turn's first request differs (%d bytes, not %d); "
                "the %d characters it showed are not in the history",
                len(body),
                len(call.body),
                shown,
            )
            call.response.close()
            return None
        return call

    async def _stream_adopted(self, call: EarlyCall) -> AsyncGenerator[ModelEvent, None]:
        """The early first call's reply, read on: the text it showed comes out first, at once, marked as shown
        (`TextDelta.shown`: the user saw it, so the turn keeps it and never retries it); the parse from the start
        then checks it and goes on after it."""
        for text in call.shown:
            yield TextDelta(text, shown=call.message_id)
        response = AdoptedResponse(call.response)
        reader = ResponsesReader()
        try:
            await response.start()
            if response.status_code >= 400:
                raise await _http_error(response)
            try:
                async for event in _events(response, reader, list(call.shown)):
                    yield event
            except (StreamStalled, StreamDropped):
                if reader.finish_reason is None:
                    raise
        finally:
            with anyio.CancelScope(shield=True):
                await response.aclose()
        yield self._completion(reader)

    def _completion(self, reader: ResponsesReader) -> Completion:
        message, finish_reason = reader.finish()
        counts = reader.usage
        usage = None
        if counts is not None:
            entry = self.route.prices
            cost = None
            if entry is not None:
                cost = cost_with_cache(
                    entry, counts.input_tokens, counts.output_tokens, counts.cached_tokens, counts.reasoning_tokens
                )
            usage = Usage(counts.input_tokens, counts.output_tokens, cost, counts.cached_tokens)
        return Completion(message=message, finish_reason=finish_reason, usage=usage)


async def _events(response: Any, reader: ResponsesReader, shown: list[str]) -> AsyncGenerator[ModelEvent, None]:
    """The events of a response's body; the first text deltas, when they are the `shown` ones, left out."""
    async for _name, data in sse_events(response.aiter_bytes()):
        for event in reader.add(data):
            if shown and isinstance(event, TextDelta):
                if event.text != shown[0]:
                    log.error("the early first call showed %r where the reply has %r", shown[0], event.text)
                shown.pop(0)
                continue
            yield event


def _summary_refused(exc: ResponsesHTTPError) -> bool:
    return exc.status_code == 400 and (exc.param == "reasoning.summary" or "reasoning summar" in exc.message.lower())


async def _http_error(response: Any) -> ResponsesHTTPError:
    raw = b""
    async for part in response.aiter_bytes():
        raw += part
        if len(raw) > _ERROR_BODY_LIMIT:
            break
    text = raw.decode(errors="replace").strip()
    try:
        payload = json.loads(text)
    except ValueError:
        payload = None
    error = payload.get("error") if isinstance(payload, dict) else None
    error = error if isinstance(error, dict) else {}
    message = error.get("message")
    kind = error.get("type")
    words = str(message) if message else (text or response.reason_phrase)
    return ResponsesHTTPError(
        response.status_code,
        words,
        dict(response.headers),
        str(kind) if kind else None,
        error.get("code"),
        error.get("param"),
    )


def wants_responses(model: str) -> bool:
    """Whether the model string names a model this wire may serve (decided by its name alone, at once)."""
    return responses_name(model) is not None


async def responses_model_for(config: ModelConfig) -> ResponsesModel | None:
    """The Responses API model for `config`, or None when the model does not take this wire."""
    if not wants_responses(config.model):
        return None
    prices = price_map.loaded() or await anyio.to_thread.run_sync(price_map.load, abandon_on_cancel=True)
    # Without litellm's map (not installed), the model is served all the same, unpriced.
    route = responses_route(config.model, config.api_base, config.api_key, prices or PriceMap({}), os.environ)
    return None if route is None else ResponsesModel(config, route)
