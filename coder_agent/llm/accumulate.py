"""Turning litellm stream chunks into events, and the chunks seen so far into the whole message."""

from __future__ import annotations

import dataclasses
from typing import Any

from .base import ModelEvent, ReasoningDelta, TextDelta, ToolCallBegin, Usage
from .errors import StreamEndedEarly
from .messages import AssistantMessage, ToolCallRequest


def _field(obj: Any, name: str) -> Any:
    """`obj.name`, or None when absent, without pydantic's slow `__getattr__` for absent names.

    litellm's stream objects keep their values in `__pydantic_extra__` or `__dict__` and delete the
    optional fields a chunk lacks (reasoning, usage, ...); `getattr(chunk, name, None)` on one of those
    costs ~8 us, and most chunks lack most of them.
    """
    if isinstance(obj, dict):
        return obj.get(name)
    extra = getattr(obj, "__pydantic_extra__", None)
    if extra and name in extra:
        return extra[name]
    fields = getattr(obj, "__dict__", None)
    if fields is None:
        return getattr(obj, name, None)
    return fields.get(name)


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
        # litellm's chunk objects are pydantic models whose missing attributes go through a slow
        # `__getattr__`; reading their `__dict__` keeps this at a few microseconds per chunk.
        events: list[ModelEvent] = []
        usage = _field(chunk, "usage")
        if usage is not None:
            details = _field(usage, "prompt_tokens_details")
            cached = int(_field(details, "cached_tokens") or 0) if details is not None else 0
            self._add_usage(
                int(_field(usage, "prompt_tokens") or 0), int(_field(usage, "completion_tokens") or 0), cached
            )
        choices = _field(chunk, "choices")
        if not choices:
            return events
        choice = choices[0]
        finish_reason = _field(choice, "finish_reason")
        if finish_reason:
            self._finish_reason = finish_reason
        delta = _field(choice, "delta")
        if delta is None:
            return events
        # vLLM, OpenRouter and others name it `reasoning`; litellm renames it `reasoning_content`.
        reasoning = _field(delta, "reasoning_content") or _field(delta, "reasoning")
        if reasoning:
            self._reasoning.append(reasoning)
            events.append(ReasoningDelta(reasoning))
        blocks = _field(delta, "thinking_blocks")
        if blocks:
            self._add_thinking_blocks(blocks)
        content = _field(delta, "content")
        if content:
            self._text.append(content)
            events.append(TextDelta(content))
        for call in _field(delta, "tool_calls") or ():
            self._add_tool_call_delta(call, events)
        return events

    def _add_usage(self, prompt: int, completion: int, cached: int = 0) -> None:
        # As litellm adds up a stream's usage: a count of 0 never replaces an earlier one, and (0, 0) is
        # no usage at all (what litellm reports when the provider sent none).
        old = self._usage
        if old is not None:
            prompt, completion = prompt or old.prompt_tokens, completion or old.completion_tokens
            cached = cached or old.cached_tokens
        if prompt or completion:
            self._usage = Usage(prompt, completion, cached_tokens=cached)

    def _add_tool_call_delta(self, call: Any, events: list[ModelEvent]) -> None:
        index = _field(call, "index") or 0
        slot = self._tools.setdefault(index, _ToolSlot())
        call_id = _field(call, "id")
        if call_id:
            slot.id = call_id
        function = _field(call, "function")
        if function is not None:
            name, arguments = _field(function, "name"), _field(function, "arguments")
            if name:
                slot.name += name
            if arguments:
                slot.arguments.append(arguments)
        if not slot.announced and slot.id and slot.name:
            slot.announced = True
            events.append(ToolCallBegin(index, slot.id, slot.name))

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

    @property
    def finish_reason_seen(self) -> bool:
        """Whether a chunk carried a finish reason (litellm makes one up; the direct path never does)."""
        return self._finish_reason is not None

    @property
    def received_anything(self) -> bool:
        """Whether any text, reasoning or tool call arrived."""
        return bool(self._text or self._reasoning or self._tools or self._thinking_blocks)

    def check_complete(self, finished: bool) -> None:
        """Raise `StreamEndedEarly` unless the stream ended as a reply ends: with a finish reason, and with
        something in it (text, a thought, a tool call, or at least the usage). `finished`: whether the
        provider sent a finish reason."""
        if not finished:
            raise StreamEndedEarly(received=self.received_anything)
        if not self.received_anything and self._usage is None:
            raise StreamEndedEarly(
                received=False
            )  # e.g. `[DONE]` alone, which some of litellm's handlers call a finish

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
