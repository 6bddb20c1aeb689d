"""`usage_update` after each model call: tokens in context, the model's context window, cumulative cost; and in
`_meta["coder-agent"].usage` the call's own split (all its prompt tokens, the cache reads among them, its output
tokens), which ACP v1 has no field for and eval runs add up per trial."""

from __future__ import annotations

from ..acp.schema import Cost, UsageUpdate
from ..llm.base import Usage
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
        "cachedReadTokens": usage.cached_tokens,
        "outputTokens": usage.completion_tokens,
    }
    await session.publish(UsageUpdate(used=used, size=size, cost=cost, _meta={"coder-agent": {"usage": split}}))
