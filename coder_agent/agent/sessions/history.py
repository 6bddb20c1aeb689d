"""Invariants of the model-facing conversation that providers enforce."""

from __future__ import annotations

from collections.abc import Sequence

from ...llm.messages import AssistantMessage, ChatMessage, ToolMessage


def missing_answers(history: Sequence[ChatMessage], answer: str) -> list[ToolMessage]:
    """A `ToolMessage` saying `answer` for every assistant tool call that has none yet, in call order.

    Providers reject a conversation in which a tool call goes unanswered, and the session is dead from then on.
    """
    answered = {message.tool_call_id for message in history if isinstance(message, ToolMessage)}
    return [
        ToolMessage(tool_call_id=call.id, content=answer)
        for message in history
        if isinstance(message, AssistantMessage)
        for call in message.tool_calls
        if call.id not in answered
    ]
