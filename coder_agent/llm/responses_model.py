"""`Model` on OpenAI's Responses API, for GPT-5 and o-series models, for the whole session, without litellm.

The request is `wire.responses_request`'s (reasoning kept across turns by sending back each reasoning item with
its encrypted content, the session's reasoning effort, a prompt cache key per session); the stream is read by
`responses_stream.ResponsesReader`; retries, errors and their words are the other paths' (`retry`, `errors`),
and usage is priced from litellm's map as on every path (`wire.model_info`: cached and reasoning tokens at their
own prices). The early first call is taken over as `DirectModel` takes it: when the body is the same bytes, its
reply is parsed from the first byte (`adopted`). Per event it parses one SSE event and one JSON object, as the
direct path does. `tests/llm/test_responses_contract.py` compares all of it with litellm's Responses bridge.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing
from typing import Any

import anyio

from ..prestart import raw_http
from ..prestart.early_call import EarlyCall
from . import http_client
from .adopted import AdoptedResponse
from .base import Completion, ModelError, ModelEvent, Usage
from .direct_model import drop_early, error_body, take_early
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
from .wire import model_info
from .wire.config import ModelConfig
from .wire.responses_route import ResponsesRoute
from .wire.sse import sse_events

log = logging.getLogger(__name__)

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
    def __init__(
        self, config: ModelConfig, route: ResponsesRoute, cache_key: str | None = None, early: EarlyCall | None = None
    ) -> None:
        """`cache_key`: the session's (`prompt_cache_key`); `early`: the session's early first call, which its first
        model call takes over when it sends the same bytes."""
        self.config = config
        self.route = route
        self.cache_key = cache_key
        self.early = early
        self.info = model_info.info(config.model)
        self.name = config.model

    def request(
        self, messages: Sequence[ChatMessage], tools: Sequence[dict[str, Any]], summary: bool = True
    ) -> dict[str, Any]:
        route = self.route
        return route.body(
            self.config,
            [provider_form(message) for message in messages],
            tools,
            cache_key=self.cache_key,
            summary=summary and (route.url, route.model) not in _NO_SUMMARY,
        )

    async def stream(
        self, messages: Sequence[ChatMessage], tools: Sequence[dict[str, Any]] = ()
    ) -> AsyncGenerator[ModelEvent, None]:
        if self.route.api_key is None:
            drop_early(self.early, "the model has no key")
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
            calls = self._post(sent) if early is None else self._stream_raw(AdoptedResponse(early.response))
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
                async for event in _events(response, reader):
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
        return take_early(self.early, self.route.url, body)

    async def _stream_raw(self, response: AdoptedResponse) -> AsyncGenerator[ModelEvent, None]:
        """The early first call's reply, parsed from its first byte: what it showed comes out again, at once, from
        the bytes it read (`server.early_reply` sends the editor each piece once), and the parse goes on after it."""
        reader = ResponsesReader()
        try:
            await response.start()
            if response.status_code >= 400:
                raise await _http_error(response)
            try:
                async for event in _events(response, reader):
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
            cost = self.info.cost(
                counts.input_tokens, counts.output_tokens, counts.cached_tokens, reasoning=counts.reasoning_tokens
            )
            usage = Usage(counts.input_tokens, counts.output_tokens, cost, cache_read_tokens=counts.cached_tokens)
        return Completion(message=message, finish_reason=finish_reason, usage=usage)


async def _events(response: Any, reader: ResponsesReader) -> AsyncGenerator[ModelEvent, None]:
    """The events of a response's body."""
    async for _name, data in sse_events(response.aiter_bytes()):
        for event in reader.add(data):
            yield event


def _summary_refused(exc: ResponsesHTTPError) -> bool:
    return exc.status_code == 400 and (exc.param == "reasoning.summary" or "reasoning summar" in exc.message.lower())


async def _http_error(response: Any) -> ResponsesHTTPError:
    text = await error_body(response)
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
