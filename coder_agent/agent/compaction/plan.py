"""What a compaction summarises and what it keeps verbatim.

The conversation is cut only between whole exchanges: a user message, or an assistant message together with
the answers to its tool calls, so a tool call is never separated from its answer. The most recent exchanges
stay verbatim, up to a share of the window; the last one always does (the tool results the model is about to
read), and so does the user's request of the turn under way, wherever it falls. Everything older is
summarised by the model, and the summary takes its place at the head of the conversation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...kit.prompts import render
from ...llm.messages import AssistantMessage, ChatMessage, TextPart, UserMessage
from .window import estimate_tokens

SUMMARY_TAG = "<conversation-summary>"  # how a summary starts, in the history


def exchanges(history: Sequence[ChatMessage]) -> list[int]:
    """Where each exchange starts: at every user message and every assistant message (tool answers follow)."""
    starts = [i for i, message in enumerate(history) if isinstance(message, UserMessage | AssistantMessage)]
    if history and (not starts or starts[0] != 0):
        starts.insert(0, 0)  # a conversation that starts with stray tool answers: they go with the first exchange
    return starts


def is_summary(message: ChatMessage) -> bool:
    return (
        isinstance(message, UserMessage)
        and bool(message.parts)
        and isinstance(message.parts[0], TextPart)
        and message.parts[0].text.startswith(SUMMARY_TAG)
    )


def summary_message(summary: str) -> UserMessage:
    return UserMessage(parts=[TextPart(text=render("compacted.md", summary=summary.strip()))])


@dataclass(frozen=True)
class Plan:
    older: list[ChatMessage]  # to summarise, in order
    pinned: ChatMessage | None  # the request of the turn under way, when it falls among the older messages
    kept: list[ChatMessage]  # the recent exchanges, verbatim
    turn_start: int | None  # where the turn's request will be in the new history (None: no turn under way)

    def rebuild(self, summary: str) -> list[ChatMessage]:
        head: list[ChatMessage] = [summary_message(summary)]
        if self.pinned is not None:
            head.append(self.pinned)
        return [*head, *self.kept]


def plan(history: Sequence[ChatMessage], keep_tokens: int, turn_start: int | None = None) -> Plan | None:
    """What to summarise and what to keep; None when there is nothing older than what must stay verbatim."""
    starts = exchanges(history)
    if not starts:
        return None
    cut = starts[-1]  # the last exchange always stays
    kept_tokens = estimate_tokens(history[cut:])
    for start in reversed(starts[:-1]):
        size = estimate_tokens(history[start:cut])
        if kept_tokens + size > keep_tokens:
            break
        cut, kept_tokens = start, kept_tokens + size
    pinned_index = turn_start if turn_start is not None and turn_start < cut else None
    older = [message for i, message in enumerate(history[:cut]) if i != pinned_index]
    if not older:
        return None
    if turn_start is None:
        new_start = None
    elif pinned_index is not None:
        new_start = 1
    else:
        new_start = 1 + turn_start - cut
    pinned = history[pinned_index] if pinned_index is not None else None
    return Plan(older=older, pinned=pinned, kept=list(history[cut:]), turn_start=new_start)
