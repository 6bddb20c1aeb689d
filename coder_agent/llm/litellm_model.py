"""`Model` on litellm: one streamed completion, retried with bounded backoff while nothing has been shown."""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from types import ModuleType
from typing import Any

import anyio

from .accumulate import StreamAccumulator
from .base import Completion, ModelError, ModelEvent
from .errors import classify_error
from .loader import load_litellm
from .messages import ChatMessage
from .retry import with_retries
from .wire.config import ModelConfig

log = logging.getLogger(__name__)

__all__ = ["LiteLLMModel", "ModelConfig"]


class LiteLLMModel:
    def __init__(self, config: ModelConfig) -> None:
        self.config = config
        self.name = config.model

    async def stream(
        self, messages: Sequence[ChatMessage], tools: Sequence[dict[str, Any]] = ()
    ) -> AsyncGenerator[ModelEvent, None]:
        litellm = await load_litellm()
        attempts = with_retries(
            lambda: self._stream_once(litellm, messages, tools), self._classify, self.config.retry_policy
        )
        async with aclosing(attempts) as events:
            async for event in events:
                yield event

    def _classify(self, exc: BaseException) -> ModelError:
        return classify_error(exc, self.config.model, self.config.api_base)

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
        # litellm ends a stream that stopped without a finish reason with one it made up ("stop"); its
        # stream wrapper keeps the one the provider sent, if any.
        acc.check_complete(getattr(response, "received_finish_reason", None) is not None)
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
            # litellm would import and run its MCP bridge because tools are passed; our tools are our own.
            "_skip_mcp_handler": True,
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
