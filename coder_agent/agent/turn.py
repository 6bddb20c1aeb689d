"""One prompt turn: model -> tools -> model ... until the model stops, or the request limit is reached."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from contextlib import aclosing
from typing import Any

from ..acp.schema import AgentMessageChunk, AgentThoughtChunk, StopReason, TextContent
from ..kit.unicode import is_valid, scrub
from ..llm.base import Completion, Model, ModelError, ReasoningDelta, TextDelta
from ..llm.messages import AssistantMessage, UserMessage
from .client import Client
from .compaction.compactor import CompactionFailed, Compactor
from .compaction.window import ContextPolicy, window_of
from .sessions.history import missing_answers
from .sessions.session import Session, new_id
from .tool_calls import CANCELLED, ToolCallRunner
from .tools.base import Tool
from .usage import report_usage
from .workspace.turn_files import TurnFiles

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


async def stream_reply(session: Session, model: Model, tools: Mapping[str, Tool[Any]]) -> Completion:
    """One model call: each delta goes to the editor at once; the reply lands in history.

    `ModelError` and cancellation propagate, but whatever the user saw stays in history.
    """
    message_id = new_id("msg")
    thought_id = new_id("thought")
    shown: list[str] = []
    completion: Completion | None = None
    specs = [tool.spec() for tool in tools.values()]
    try:
        async with aclosing(model.stream(session.model_messages(), specs)) as events:
            async for event in events:
                if isinstance(event, TextDelta):
                    shown.append(event.text)
                    await session.publish(
                        AgentMessageChunk(content=TextContent(text=event.text), message_id=message_id)
                    )
                elif isinstance(event, ReasoningDelta):
                    thought = AgentThoughtChunk(content=TextContent(text=event.text), message_id=thought_id)
                    await session.publish(thought)
                elif isinstance(event, Completion):
                    completion = event
    finally:
        if completion is not None:
            session.add(_sound(completion.message).model_copy(update={"message_id": message_id}))
        elif shown:
            # Cancelled or broken off: the user saw this much, so the model should know it said it.
            session.add(AssistantMessage(text=scrub("".join(shown)), message_id=message_id))
    if completion is None:
        raise RuntimeError("the model stream ended without a completion")
    return completion


def _sound(message: AssistantMessage) -> AssistantMessage:
    """The reply with any text that is not Unicode scrubbed: the next request could not be encoded otherwise."""
    texts = [message.text, message.reasoning or "", *(call.arguments for call in message.tool_calls)]
    if all(is_valid(text) for text in texts):
        return message
    calls = [call.model_copy(update={"arguments": scrub(call.arguments)}) for call in message.tool_calls]
    reasoning = scrub(message.reasoning) if message.reasoning else message.reasoning
    return message.model_copy(update={"text": scrub(message.text), "reasoning": reasoning, "tool_calls": calls})


async def run_turn(
    session: Session,
    user: UserMessage,
    model: Model,
    client: Client,
    tools: Mapping[str, Tool[Any]],
    max_requests: int = 100,
    compactor: Compactor | None = None,
    turn_files: TurnFiles | None = None,
) -> StopReason:
    """Model calls and tool calls until the model stops. With a `compactor`, the conversation is compacted
    before a call that would pass the threshold, and once more (then the call is tried again) when the
    provider says a request does not fit."""
    turn_start = len(session.history)
    session.add(user)
    policy = compactor.policy if compactor is not None else ContextPolicy(window_of(model.name))
    runner = ToolCallRunner(session, client, tools, output_chars=policy.tool_output_chars, turn_files=turn_files)
    requests = 0
    retried = False  # this call was already retried after a context-window error
    try:
        while requests < max_requests:
            if compactor is not None:
                turn_start = await compactor.maybe_compact(turn_start)
            try:
                completion = await stream_reply(session, model, tools)
            except ModelError as exc:
                if exc.context_window and compactor is not None and not retried:
                    retried = True
                    turn_start = await _compact_for(compactor, turn_start, exc)
                    continue
                if len(session.history) == turn_start + 1:
                    # The model never answered this prompt: leave it out, or the next one would follow it unanswered.
                    session.forget_from(turn_start)
                raise
            requests += 1
            retried = False
            await report_usage(session, completion.usage, policy.window)
            calls = completion.message.tool_calls
            if not calls:
                stop_reason = stop_reason_for(completion.finish_reason)
                if stop_reason == "refusal":
                    # ACP: a refused prompt and all that came after it stay out of the next prompt's context.
                    session.forget_from(turn_start)
                return stop_reason
            await runner.run_all(calls)
        log.info("turn in %s stopped after %d model requests", session.id, max_requests)
        return "max_turn_requests"
    finally:
        # Whatever ended the turn (a cancel before the calls started, a broken client), no call goes unanswered.
        for answer in missing_answers(session.history[turn_start:], CANCELLED):
            session.add(answer)


async def _compact_for(compactor: Compactor, turn_start: int, error: ModelError) -> int:
    """Compact after the provider said the conversation does not fit; the error stands if that cannot be done."""
    try:
        done = await compactor.compact(
            turn_start, why="the provider said the conversation no longer fits", keep_least=True
        )
    except CompactionFailed as exc:
        raise ModelError(f"{error.message} ({exc.message})", status=error.status, context_window=True) from exc
    if done is None or done.after >= done.before:
        raise ModelError(
            f"{error.message} (there is nothing older to summarise: the request itself is too large)",
            status=error.status,
            context_window=True,
        )
    return turn_start if done.turn_start is None else done.turn_start
