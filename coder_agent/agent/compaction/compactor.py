"""Compacting a session: the user sees it start and end, the model writes the summary, the history is swapped.

The new history replaces the old one in memory and in the store at once, only once the summary is written;
a failure or a cancel at any point leaves the conversation as it was. The user is shown a `tool_call`
(kind `think`) that every client renders, or, to a client that advertised the unstable `session.compaction`,
`compaction_update`s; the update log keeps the `tool_call` form, which any client can replay.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import anyio

from ...acp.schema import (
    CompactionStatus,
    CompactionUpdate,
    ContentBlock,
    ContentToolCallContent,
    Cost,
    TextContent,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
)
from ...llm.base import Model, ModelError
from ...llm.messages import ChatMessage
from ...store.base import StoreError
from ..client import Client
from ..errors import AgentError
from ..sessions.repair import COMPACTION_PREFIX
from ..sessions.session import Session, new_id
from .plan import plan
from .summarize import summarize
from .window import ContextPolicy, estimate_tokens

log = logging.getLogger(__name__)

TITLE = "Compacting the conversation"
MIN_GAIN = 0.05  # an automatic compaction summarises at least this share of the window
# Less than this to summarise (a greeting and its answer) and a summary could not be smaller: no model call.
MIN_SUMMARISED_TOKENS = 200


class CompactionFailed(AgentError):
    """The summary could not be written or kept; the conversation is unchanged."""


@dataclass(frozen=True)
class Compacted:
    """A compaction that was shown; `after == before` when it freed nothing and the history stayed as it was."""

    turn_start: int | None  # where the turn's request now is in the history
    before: int  # tokens in context, estimated, before and after
    after: int


def _text(text: str) -> ContentBlock:
    return TextContent(text=text)


class Compactor:
    """Compacts one session's conversation during one turn (or for `/compact`)."""

    def __init__(self, session: Session, model: Model, client: Client, policy: ContextPolicy, tools_tokens: int = 0):
        self.session = session
        self.policy = policy
        self._model = model
        self._client = client
        self._tools_tokens = tools_tokens
        self._gave_up = False

    def in_use(self) -> int:
        """Tokens in context now: the last model call's count plus an estimate of what came since."""
        session = self.session
        mark = session.context_mark
        if mark is None or mark > len(session.history):
            return estimate_tokens(session.model_messages()) + self._tools_tokens
        return session.context_tokens + estimate_tokens(session.history[mark:])

    def keep_tokens(self) -> int:
        """How much of the recent conversation stays verbatim: a share of the window, and at most half of
        what the system prompt and the tools leave below the threshold (so one compaction frees enough)."""
        fixed = estimate_tokens(self.session.model_messages()[:1]) + self._tools_tokens
        return max(0, min(self.policy.keep_tokens, (self.policy.threshold - fixed) // 2))

    async def maybe_compact(self, turn_start: int) -> int:
        """Compact when the context in use is past the threshold; returns where the turn's request now is.

        Not when what could be summarised is too little to be worth a model call; a failure is shown and
        logged, and the turn goes on uncompacted (no second try in this turn).
        """
        if self._gave_up or self.in_use() <= self.policy.threshold:
            return turn_start
        chosen = plan(self.session.history, self.keep_tokens(), turn_start)
        if chosen is None or estimate_tokens(chosen.older) < self.policy.window * MIN_GAIN:
            return turn_start
        share = round(100 * self.in_use() / self.policy.window)
        try:
            done = await self.compact(turn_start, why=f"the context is {share}% full")
        except CompactionFailed as exc:
            log.warning("%s: %s", self.session.id, exc.message)
            self._gave_up = True
            return turn_start
        return turn_start if done is None or done.turn_start is None else done.turn_start

    async def compact(
        self,
        turn_start: int | None,
        *,
        why: str,
        focus: str | None = None,
        keep_least: bool = False,
        since: Sequence[str] = (),
    ) -> Compacted | None:
        """Summarise the older turns; None when there is nothing to summarise. Raises `CompactionFailed`.

        `keep_least`: keep only what must stay verbatim (the provider refused a request: the window we know
        of is wrong, or nothing less will do). `since`: what happened after the conversation that the model has
        not been told yet (files undone): the summary must not say otherwise.
        """
        session = self.session
        chosen = plan(session.history, 0 if keep_least else self.keep_tokens(), turn_start)
        if chosen is None or estimate_tokens(chosen.older) < MIN_SUMMARISED_TOKENS:
            return None
        # "Before" and "after" are one measure (the estimate): the provider's count of the last call holds more
        # (its own framing, the tools as it renders them), so comparing it with an estimate would show a
        # compaction that freed nothing as freeing something, or the other way round.
        before = self._estimate(session.history)
        compaction_id = new_id(COMPACTION_PREFIX.rstrip("_"))
        await self._started(compaction_id, why, focus)
        try:
            summary = await summarize(self._model, chosen.older, self.policy.summary_input_tokens, focus, since)
            history = chosen.rebuild(summary.text)
            if self._estimate(history) >= before:  # the summary is no smaller than what it would replace: keep that
                self._gave_up = True
                stays = (
                    f"Nothing to free: a summary of the {len(chosen.older)} earlier messages would take as much "
                    f"of the context as they do (~{before:,} tokens in use either way). The conversation is unchanged."
                )
                await self._ended(compaction_id, "completed", stays, raw={"before": before, "after": before})
                return Compacted(turn_start, before, before)
            session.replace_history(history)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                await self._ended(compaction_id, "cancelled", "Cancelled: the conversation is unchanged.")
            raise
        except (ModelError, StoreError) as exc:
            message = exc.message if isinstance(exc, ModelError) else f"it could not be saved ({exc})"
            await self._ended(compaction_id, "failed", f"Compaction failed: {message}. The conversation is unchanged.")
            raise CompactionFailed(f"Compaction failed: {message}") from exc
        after = self._estimate(history)
        session.context_tokens, session.context_mark = after, len(history)
        stats = session.compactions
        stats.count += 1
        stats.prompt_tokens += summary.prompt_tokens
        stats.completion_tokens += summary.completion_tokens
        session.cost_usd += summary.cost_usd
        window = self.policy.window
        note = (
            f"Summarised {len(chosen.older)} earlier messages and kept the {len(history) - 1} most recent verbatim. "
            f"Context in use: ~{before:,} -> ~{after:,} tokens of {window:,} (~{max(before - after, 0):,} freed)."
        )
        raw = {"before": before, "after": after, "window": window, "summarised": len(chosen.older)}
        await self._ended(compaction_id, "completed", note, summary.text, raw)
        cost = Cost(amount=round(session.cost_usd, 6), currency="USD") if session.cost_usd else None
        await session.publish(UsageUpdate(used=after, size=window, cost=cost))
        log.info("compacted %s (%s): ~%d -> ~%d tokens", session.id, why, before, after)
        return Compacted(chosen.turn_start, before, after)

    def _estimate(self, history: list[ChatMessage]) -> int:
        """The tokens the system prompt, the tools and `history` take, estimated."""
        return estimate_tokens([*self.session.model_messages()[:1], *history]) + self._tools_tokens

    async def _started(self, compaction_id: str, why: str, focus: str | None) -> None:
        start = ToolCallStart(
            tool_call_id=compaction_id,
            title=TITLE,
            kind="think",
            status="in_progress",
            raw_input={"why": why, **({"focus": focus} if focus else {})},
        )
        if self._client.takes_compaction_updates():
            await self.session.publish(
                CompactionUpdate(compaction_id=compaction_id, status="in_progress"), replay_as=start
            )
        else:
            await self.session.publish(start)

    async def _ended(
        self, compaction_id: str, status: CompactionStatus, note: str, summary: str | None = None, raw: object = None
    ) -> None:
        blocks = [_text(note), *([_text(summary)] if summary else [])]
        shown = ToolCallProgress(
            tool_call_id=compaction_id,
            status="completed" if status == "completed" else "failed",
            content=[ContentToolCallContent(content=block) for block in blocks],
            raw_output=raw,
        )
        if not self._client.takes_compaction_updates():
            await self.session.publish(shown)
            return
        update = CompactionUpdate(
            compaction_id=compaction_id,
            status=status,
            summary=blocks if status == "completed" else None,
            error=note if status == "failed" else None,
        )
        await self.session.publish(update, replay_as=shown)
