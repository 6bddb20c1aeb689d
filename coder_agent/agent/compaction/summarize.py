"""Asking the model for a summary of part of a conversation (compaction's model call).

The messages are given to the model as a plain-text transcript, not as the conversation itself: every
provider takes it (no tool definitions are needed for old tool calls), long tool results can be cut, and a
part too long for one request is summarised piece by piece, each request carrying the summary so far.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import aclosing
from dataclasses import dataclass

from ...kit.prompts import render
from ...llm.base import Completion, Model, ModelError
from ...llm.messages import AssistantMessage, ChatMessage, SystemMessage, TextPart, ToolMessage, UserMessage
from .plan import SUMMARY_TAG, is_summary
from .window import CHARS_PER_TOKEN

TOOL_RESULT_HEAD = 1_500  # characters of a tool result the summariser reads, from its start
TOOL_RESULT_TAIL = 500  # and from its end
ARGUMENTS_CHARS = 600


@dataclass
class Summary:
    text: str = ""
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


def _cut(text: str, head: int, tail: int) -> str:
    if len(text) <= head + tail:
        return text
    return f"{text[:head]}\n[... {len(text) - head - tail} characters left out ...]\n{text[-tail:]}"


def render_message(message: ChatMessage) -> str:
    """One message as the summariser reads it."""
    if isinstance(message, UserMessage):
        texts = [part.text if isinstance(part, TextPart) else "[an image]" for part in message.parts]
        if is_summary(message):
            return "### Summary of the conversation before this point\n" + texts[0].removeprefix(SUMMARY_TAG)
        return "### User\n" + "\n\n".join(texts)
    if isinstance(message, AssistantMessage):
        lines = [message.text] if message.text else []
        lines += [f"[tool call {c.name}: {_cut(c.arguments, ARGUMENTS_CHARS, 0)}]" for c in message.tool_calls]
        return "### Agent\n" + "\n".join(lines)
    if isinstance(message, ToolMessage):
        return "### Tool result\n" + _cut(message.content, TOOL_RESULT_HEAD, TOOL_RESULT_TAIL)
    return "### System\n" + message.text


def pieces(messages: Sequence[ChatMessage], budget_tokens: int) -> list[str]:
    """The transcript in pieces of at most `budget_tokens` each (a single longer message is cut)."""
    budget = budget_tokens * CHARS_PER_TOKEN
    result: list[str] = []
    current: list[str] = []
    size = 0
    for message in messages:
        text = _cut(render_message(message), budget * 3 // 4, budget // 4 - 100)
        if current and size + len(text) > budget:
            result.append("\n\n".join(current))
            current, size = [], 0
        current.append(text)
        size += len(text) + 2
    if current:
        result.append("\n\n".join(current))
    return result


async def _ask(model: Model, system: str, request: str, summary: Summary) -> str:
    completion: Completion | None = None
    messages: list[ChatMessage] = [SystemMessage(text=system), UserMessage(parts=[TextPart(text=request)])]
    async with aclosing(model.stream(messages, [])) as events:
        async for event in events:
            if isinstance(event, Completion):
                completion = event
    if completion is None:
        raise ModelError("the model's summary ended without a completion")
    summary.requests += 1
    if completion.usage is not None:
        summary.prompt_tokens += completion.usage.prompt_tokens
        summary.completion_tokens += completion.usage.completion_tokens
        summary.cost_usd += completion.usage.cost_usd or 0.0
    text = completion.message.text.strip()
    if not text:
        raise ModelError("the model returned an empty summary")
    return text


async def summarize(
    model: Model,
    messages: Sequence[ChatMessage],
    budget_tokens: int,
    focus: str | None = None,
    since: Sequence[str] = (),
) -> Summary:
    """The model's summary of `messages` (raises `ModelError`); `focus`: what the user wants kept above all;
    `since`: what happened after them (files the user undid), which the summary must reflect."""
    summary = Summary()
    system = render("compact.md")
    focus_line = f"\nThe user asked to keep this in focus: {focus.strip()}" if focus and focus.strip() else ""
    if since:
        happened = " ".join(since)
        focus_line += (
            f"\nSince the conversation below, outside it: {happened} The summary must say so: what was undone "
            "is no longer there."
        )
    for piece in pieces(messages, budget_tokens):
        previous = (
            f"The summary of the conversation before the part below:\n<summary>\n{summary.text}\n</summary>\n"
            "Write one summary that covers both that summary and the part below.\n"
            if summary.text
            else ""
        )
        request = render("compact_request.md", previous=previous, focus=focus_line, transcript=piece)
        summary.text = await _ask(model, system, request, summary)
    return summary
