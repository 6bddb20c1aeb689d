"""Building offline scripts: a golden run is rounds of tool calls, then a final text reply.

The scripted server plays one reply per model request, in order. After each round of tool calls the agent
asks the model again, so a script is `[round 1, round 2, ..., final text]`. Calls of one round run in the
same model turn (consecutive read-only ones concurrently).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from coder_agent.scripted.script import Reply, Script, ToolCallStep, tool_call

Round = ToolCallStep | Sequence[ToolCallStep]


def call(name: str, **arguments: Any) -> ToolCallStep:
    """One tool call with its real arguments (streamed in three pieces, as providers do)."""
    return tool_call(name, arguments)


def _pieces(text: str, n: int = 3) -> list[str]:
    words = text.split(" ")
    size = max(1, -(-len(words) // n))
    chunks = [" ".join(words[i : i + size]) for i in range(0, len(words), size)]
    return [chunk + (" " if i < len(chunks) - 1 else "") for i, chunk in enumerate(chunks)]


def golden(*rounds: Round, final: str) -> Script:
    """Tool-call rounds, each one model reply (ids `call_<round>_<index>`), then `final` as streamed text."""
    replies = []
    for number, round_ in enumerate(rounds, start=1):
        calls = [round_] if isinstance(round_, ToolCallStep) else list(round_)
        calls = [c.model_copy(update={"id": f"call_{number}_{i}"}) for i, c in enumerate(calls)]
        replies.append(Reply.tool_calls(calls))
    replies.append(Reply.text(*_pieces(final)))
    return Script(replies=replies)


def answer_only(text: str) -> Script:
    """A script that only talks: the usual null script."""
    return Script(replies=[Reply.text(*_pieces(text))])
