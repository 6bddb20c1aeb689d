"""`usage_update` after each model call: tokens in context, the model's context window, cumulative cost."""

from __future__ import annotations

from ..acp.schema import Cost, UsageUpdate
from ..llm import catalog
from ..llm.base import Usage
from .session import Session

# Used when litellm does not know the model (a local or custom one): the window most current models have.
FALLBACK_CONTEXT_WINDOW = 128_000


async def report_usage(session: Session, model: str, usage: Usage | None) -> None:
    if usage is None:
        return
    if usage.cost_usd is not None:
        session.cost_usd += usage.cost_usd
    size = catalog.context_window(model) or FALLBACK_CONTEXT_WINDOW
    cost = Cost(amount=round(session.cost_usd, 6), currency="USD") if usage.cost_usd is not None else None
    await session.publish(UsageUpdate(used=usage.prompt_tokens + usage.completion_tokens, size=size, cost=cost))
