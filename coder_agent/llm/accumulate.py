"""Turning litellm stream chunks into events, and the chunks seen so far into the whole message."""

from __future__ import annotations

import dataclasses
from typing import Any

from .base import ModelEvent, ReasoningDelta, TextDelta, ToolCallBegin, Usage
from .messages import AssistantMessage, ToolCallRequest


@dataclasses.dataclass
class _ToolSlot:
    id: str = ""
    name: str = ""
    arguments: list[str] = dataclasses.field(default_factory=list)
    announced: bool = False


class StreamAccumulator:
    """Fed every chunk of one streamed completion; yields live events and, at the end, the message."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._tools: dict[int, _ToolSlot] = {}
        self._thinking_blocks: list[dict[str, Any]] = []
        self._finish_reason: str | None = None
        self._usage: Usage | None = None

    def add(self, chunk: Any) -> list[ModelEvent]:
        events: list[ModelEvent] = []
        usage = getattr(chunk, "usage", None)
        if usage is not None and getattr(usage, "prompt_tokens", None) is not None:
            self._usage = Usage(int(usage.prompt_tokens or 0), int(usage.completion_tokens or 0))
        choices = getattr(chunk, "choices", None)
        if not choices:
            return events
        choice = choices[0]
        if choice.finish_reason:
            self._finish_reason = choice.finish_reason
        delta = choice.delta
        if delta is None:
            return events
        reasoning = getattr(delta, "reasoning_content", None)
        if reasoning:
            self._reasoning.append(reasoning)
            events.append(ReasoningDelta(reasoning))
        blocks = getattr(delta, "thinking_blocks", None)
        if blocks:
            self._add_thinking_blocks(blocks)
        if delta.content:
            self._text.append(delta.content)
            events.append(TextDelta(delta.content))
        for call in getattr(delta, "tool_calls", None) or ():
            slot = self._tools.setdefault(call.index or 0, _ToolSlot())
            if call.id:
                slot.id = call.id
            function = call.function
            if function is not None:
                if function.name:
                    slot.name += function.name
                if function.arguments:
                    slot.arguments.append(function.arguments)
            if not slot.announced and slot.id and slot.name:
                slot.announced = True
                events.append(ToolCallBegin(call.index or 0, slot.id, slot.name))
        return events

    def _add_thinking_blocks(self, blocks: list[Any]) -> None:
        for raw in blocks:
            block = dict(raw) if not isinstance(raw, dict) else raw
            last = self._thinking_blocks[-1] if self._thinking_blocks else None
            if last is not None and last.get("type") == block.get("type") and not last.get("signature"):
                if block.get("thinking"):
                    last["thinking"] = last.get("thinking", "") + block["thinking"]
                if block.get("signature"):
                    last["signature"] = block["signature"]
            else:
                self._thinking_blocks.append(dict(block))

    def finish(self) -> tuple[AssistantMessage, str, Usage | None]:
        tool_calls = [
            ToolCallRequest(id=slot.id or f"call_{index}", name=slot.name, arguments="".join(slot.arguments))
            for index, slot in sorted(self._tools.items())
        ]
        message = AssistantMessage(
            text="".join(self._text),
            reasoning="".join(self._reasoning) or None,
            tool_calls=tool_calls,
            thinking_blocks=self._thinking_blocks or None,
        )
        finish_reason = self._finish_reason or ("tool_calls" if tool_calls else "stop")
        return message, finish_reason, self._usage

    @staticmethod
    def priced(usage: Usage, cost: float | None) -> Usage:
        return dataclasses.replace(usage, cost_usd=cost)
