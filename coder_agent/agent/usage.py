"""`usage_update` after each model call: tokens in context, the model's context window, cumulative cost; and in
`_meta["coder-agent"].usage` the call's own split (all its prompt tokens, the cache reads and the cache writes
among them, its output tokens), which ACP v1 has no field for and eval runs add up per trial. Also the user's
prices for a model litellm does not price."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, replace
from typing import Any

from ..acp.schema import Cost, UsageUpdate
from ..llm.base import Completion, Model, ModelEvent, Usage
from ..llm.messages import ChatMessage
from .compaction.window import FALLBACK_CONTEXT_WINDOW
from .sessions.session import Session


async def report_usage(session: Session, usage: Usage | None, size: int = FALLBACK_CONTEXT_WINDOW) -> None:
    """Count the call's cost, note what the conversation takes now (the history so far), and tell the user."""
    if usage is None:
        return
    if usage.cost_usd is not None:
        session.cost_usd += usage.cost_usd
    used = usage.prompt_tokens + usage.completion_tokens
    session.context_tokens, session.context_mark = used, len(session.history)
    cost = Cost(amount=round(session.cost_usd, 6), currency="USD") if usage.cost_usd is not None else None
    split = {
        "inputTokens": usage.prompt_tokens,
        "cachedReadTokens": usage.cache_read_tokens,
        "cacheWriteTokens": usage.cache_write_tokens,
        "outputTokens": usage.completion_tokens,
    }
    await session.publish(UsageUpdate(used=used, size=size, cost=cost, _meta={"coder-agent": {"usage": split}}))


@dataclass(frozen=True)
class Prices:
    """The user's prices for a model litellm does not price (`CODER_AGENT_INPUT_PRICE`, `_OUTPUT_PRICE`)."""

    input_per_million: float = 0.0
    output_per_million: float = 0.0

    def cost(self, usage: Usage) -> float:
        return (usage.prompt_tokens * self.input_per_million + usage.completion_tokens * self.output_per_million) / 1e6


class PricedModel:
    """A model whose calls litellm cannot price, priced by the user's `Prices`: a call litellm (or the direct
    path's copy of its map) prices keeps that price. Only the last event of a stream is looked at twice."""

    def __init__(self, model: Model, prices: Prices) -> None:
        self._model = model
        self._prices = prices
        self.name = model.name

    async def stream(
        self, messages: Sequence[ChatMessage], tools: Sequence[dict[str, Any]] = ()
    ) -> AsyncGenerator[ModelEvent, None]:
        async with aclosing(self._model.stream(messages, tools)) as events:
            async for event in events:
                if isinstance(event, Completion) and event.usage is not None and event.usage.cost_usd is None:
                    usage = replace(event.usage, cost_usd=self._prices.cost(event.usage))
                    event = replace(event, usage=usage)
                yield event


def priced(
    model_for: Callable[[str, str | None, str], Model], prices: Prices | None
) -> Callable[[str, str | None, str], Model]:
    """`model_for`, its models priced by `prices` where litellm has no price for them (unchanged without prices)."""
    if prices is None:
        return model_for

    def make(name: str, effort: str | None, session_id: str) -> Model:
        return PricedModel(model_for(name, effort, session_id), prices)

    return make
