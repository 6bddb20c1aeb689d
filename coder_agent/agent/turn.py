"""One prompt turn: the model streams, each delta goes to the editor at once, the reply lands in history."""

from __future__ import annotations

import logging
from contextlib import aclosing

from ..acp.schema import AgentMessageChunk, AgentThoughtChunk, StopReason, TextContent
from ..llm.base import Completion, Model, ReasoningDelta, TextDelta
from ..llm.messages import AssistantMessage, UserMessage
from .client import Client
from .session import Session, new_id

log = logging.getLogger(__name__)

_STOP_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "end_turn": "end_turn",
    "tool_calls": "end_turn",
    "length": "max_tokens",
    "max_tokens": "max_tokens",
    "content_filter": "refusal",
    "refusal": "refusal",
}


def stop_reason_for(finish_reason: str) -> StopReason:
    return _STOP_REASONS.get(finish_reason, "end_turn")


async def run_turn(session: Session, user: UserMessage, model: Model, client: Client) -> StopReason:
    """Run the turn; `ModelError` and cancellation propagate, but whatever was shown stays in history."""
    session.history.append(user)
    message_id = new_id("msg")
    thought_id = new_id("thought")
    shown: list[str] = []
    completion: Completion | None = None
    try:
        async with aclosing(model.stream(session.model_messages())) as events:
            async for event in events:
                if isinstance(event, TextDelta):
                    shown.append(event.text)
                    update = AgentMessageChunk(content=TextContent(text=event.text), message_id=message_id)
                    await client.session_update(session.id, update)
                elif isinstance(event, ReasoningDelta):
                    thought = AgentThoughtChunk(content=TextContent(text=event.text), message_id=thought_id)
                    await client.session_update(session.id, thought)
                elif isinstance(event, Completion):
                    completion = event
    finally:
        if completion is not None:
            session.history.append(completion.message)
        elif shown:
            # Cancelled or broken off: the user saw this much, so the model should know it said it.
            session.history.append(AssistantMessage(text="".join(shown)))
    if completion is None:
        raise RuntimeError("the model stream ended without a completion")
    return stop_reason_for(completion.finish_reason)
