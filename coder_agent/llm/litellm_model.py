"""`Model` on litellm: one streamed completion, retried with bounded backoff while nothing has been shown."""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import anyio

from .accumulate import StreamAccumulator
from .base import Completion, ModelError, ModelEvent
from .errors import classify_error, retry_after_seconds
from .loader import load_litellm
from .messages import ChatMessage

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ModelConfig:
    model: str
    api_base: str | None = None
    api_key: str | None = None
    timeout: float = 120.0  # litellm applies it per read while streaming: a stall detector
    max_retries: int = 3
    retry_base_delay: float = 1.0
    retry_max_delay: float = 30.0
    max_tokens: int | None = None
    reasoning_effort: str | None = None


class LiteLLMModel:
    def __init__(self, config: ModelConfig) -> None:
        self.config = config
        self.name = config.model

    async def stream(
        self, messages: Sequence[ChatMessage], tools: Sequence[dict[str, Any]] = ()
    ) -> AsyncGenerator[ModelEvent, None]:
        litellm = await load_litellm()
        attempt = 0
        while True:
            shown = False
            try:
                async for event in self._stream_once(litellm, messages, tools):
                    shown = True
                    yield event
                return
            except ModelError:
                raise
            except Exception as exc:
                error = classify_error(exc, self.config.model)
                if shown:
                    # Text already reached the editor: a retry would show it twice.
                    raise ModelError(
                        f"The model's stream broke off: {error.message}", retryable=False, status=error.status
                    ) from exc
                if not error.retryable or attempt >= self.config.max_retries:
                    if attempt:
                        error.message += f" (gave up after {attempt + 1} attempts)"
                    raise error from exc
                delay = min(self.config.retry_base_delay * 2**attempt, self.config.retry_max_delay)
                delay = max(delay, min(retry_after_seconds(exc) or 0.0, self.config.retry_max_delay))
                attempt += 1
                log.warning("model call failed (%s); retry %d in %.2f s", error.message, attempt, delay)
                await anyio.sleep(delay)

    async def _stream_once(
        self, litellm: ModuleType, messages: Sequence[ChatMessage], tools: Sequence[dict[str, Any]]
    ) -> AsyncGenerator[ModelEvent, None]:
        response = await litellm.acompletion(**self._request(messages, tools))
        acc = StreamAccumulator()
        try:
            async for chunk in response:
                for event in acc.add(chunk):
                    yield event
        finally:
            # Close the HTTP stream now (on cancel too), not whenever the garbage collector gets to it.
            with anyio.CancelScope(shield=True), anyio.move_on_after(2):
                await response.aclose()
        message, finish_reason, usage = acc.finish()
        if usage is not None:
            usage = acc.priced(usage, self._cost(litellm, usage.prompt_tokens, usage.completion_tokens))
        yield Completion(message=message, finish_reason=finish_reason, usage=usage)

    def _request(self, messages: Sequence[ChatMessage], tools: Sequence[dict[str, Any]]) -> dict[str, Any]:
        config = self.config
        request: dict[str, Any] = {
            "model": config.model,
            "messages": [m.to_provider() for m in messages],
            "stream": True,
            "stream_options": {"include_usage": True},
            "timeout": config.timeout,
            "num_retries": 0,  # retries are ours: litellm's differ by provider
            "max_retries": 0,
        }
        if config.api_base:
            request["api_base"] = config.api_base
        if config.api_key:
            request["api_key"] = config.api_key
        if config.max_tokens:
            request["max_tokens"] = config.max_tokens
        if config.reasoning_effort:
            request["reasoning_effort"] = config.reasoning_effort
        if tools:
            request["tools"] = list(tools)
        return request

    def _cost(self, litellm: ModuleType, prompt_tokens: int, completion_tokens: int) -> float | None:
        try:
            prompt_cost, completion_cost = litellm.cost_per_token(
                model=self.config.model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
            )
            return float(prompt_cost) + float(completion_cost)
        except Exception:  # unknown model: no price
            return None
