"""Reading an OpenAI Responses API stream: each event's `ModelEvent`s, and at its end the whole message.

Text comes from `response.output_text.delta`, thinking from `response.reasoning_summary_text.delta` (the
summary's parts and items separated by a blank line, as they are separate paragraphs), a tool call is announced
when its `function_call` item is added and its arguments arrive whole with the item's `done`. The reasoning items
(with their encrypted content) are kept on the message, to go back with the next request. The terminal event
(`response.completed` or `.incomplete`) gives the finish reason and the usage; `error` and `response.failed`
raise the provider's words. Anything else (the content parts' bookkeeping, new event types) is skipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .base import ModelEvent, ReasoningDelta, TextDelta, ToolCallBegin
from .errors import ProviderStreamError, StreamEndedEarly
from .messages import AssistantMessage, ToolCallRequest

CONTEXT_WINDOW_CODE = "context_length_exceeded"


class ResponseFailed(ProviderStreamError):
    """`response.failed` or an `error` event; `code` is OpenAI's (`context_length_exceeded`, `server_error`, ...)."""

    def __init__(self, message: str, code: str | None) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class ResponsesUsage:
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    reasoning_tokens: int


@dataclass
class _Call:
    index: int  # among the reply's tool calls (0, 1, ...), not among its output items
    call_id: str
    name: str
    arguments: list[str] = field(default_factory=list)
    done: str | None = None  # the whole arguments, from the item's `done`


def _int(value: Any) -> int:
    return value if isinstance(value, int) and value > 0 else 0


def usage_of(payload: Any) -> ResponsesUsage | None:
    if not isinstance(payload, dict):
        return None
    inputs = payload.get("input_tokens_details") or {}
    outputs = payload.get("output_tokens_details") or {}
    return ResponsesUsage(
        _int(payload.get("input_tokens")),
        _int(payload.get("output_tokens")),
        _int(inputs.get("cached_tokens") if isinstance(inputs, dict) else 0),
        _int(outputs.get("reasoning_tokens") if isinstance(outputs, dict) else 0),
    )


class ResponsesReader:
    """Fed each event's JSON; gives the events to show, and at the end the message, finish reason and usage."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._reasoning_items: list[dict[str, Any]] = []
        self._calls: dict[int, _Call] = {}  # output index -> the call
        self._part: tuple[Any, Any] | None = None  # (item id, summary index) of the summary being streamed
        self.finish_reason: str | None = None
        self.usage: ResponsesUsage | None = None

    def add(self, data: str) -> list[ModelEvent]:
        event = json.loads(data)
        if not isinstance(event, dict):
            return []
        kind = event.get("type")
        if kind in ("response.output_text.delta", "response.refusal.delta"):
            delta = event.get("delta")
            if isinstance(delta, str) and delta:
                self._text.append(delta)
                return [TextDelta(delta)]
        elif kind == "response.reasoning_summary_text.delta":
            return self._thought(event)
        elif kind == "response.output_item.added":
            return self._item_added(event)
        elif kind == "response.function_call_arguments.delta":
            call = self._calls.get(event.get("output_index"))  # type: ignore[arg-type]
            delta = event.get("delta")
            if call is not None and isinstance(delta, str):
                call.arguments.append(delta)
        elif kind == "response.output_item.done":
            self._item_done(event.get("item"), event.get("output_index"))
        elif kind in ("response.completed", "response.incomplete"):
            self._end(kind, event.get("response") or {})
        elif kind == "response.failed":
            error = (event.get("response") or {}).get("error") or {}
            raise _failed(error if isinstance(error, dict) else {}, data)
        elif kind == "error":
            raise _failed(event, data)
        return []

    def _thought(self, event: dict[str, Any]) -> list[ModelEvent]:
        delta = event.get("delta")
        if not isinstance(delta, str) or not delta:
            return []
        events: list[ModelEvent] = []
        part = (event.get("item_id"), event.get("summary_index"))
        if self._part is not None and part != self._part:
            self._reasoning.append("\n\n")  # another paragraph of the summary, or another reasoning item's
            events.append(ReasoningDelta("\n\n"))
        self._part = part
        self._reasoning.append(delta)
        events.append(ReasoningDelta(delta))
        return events

    def _item_added(self, event: dict[str, Any]) -> list[ModelEvent]:
        item = event.get("item")
        index = event.get("output_index")
        if not isinstance(item, dict) or item.get("type") != "function_call" or not isinstance(index, int):
            return []
        call = _Call(len(self._calls), str(item.get("call_id") or item.get("id") or ""), str(item.get("name") or ""))
        if item.get("arguments"):
            call.arguments.append(str(item["arguments"]))
        self._calls[index] = call
        return [ToolCallBegin(call.index, call.call_id, call.name)]

    def _item_done(self, item: Any, index: Any) -> None:
        if not isinstance(item, dict):
            return
        if item.get("type") == "reasoning":
            self._reasoning_items.append(item)
        elif item.get("type") == "function_call":
            call = self._calls.get(index)
            if call is None:  # a call never announced: take it whole
                call = self._calls[index] = _Call(len(self._calls), str(item.get("call_id") or ""), "")
            call.name = str(item.get("name") or call.name)
            if isinstance(item.get("arguments"), str):
                call.done = item["arguments"]

    def _end(self, kind: str, response: dict[str, Any]) -> None:
        self.usage = usage_of(response.get("usage"))
        if kind == "response.completed":
            self.finish_reason = "tool_calls" if self._calls else "stop"
        else:
            details = response.get("incomplete_details") or {}
            reason = details.get("reason") if isinstance(details, dict) else None
            self.finish_reason = "content_filter" if reason == "content_filter" else "length"

    def finish(self) -> tuple[AssistantMessage, str]:
        """The whole message and why it stopped; raises `StreamEndedEarly` when the stream ended before the
        terminal event (a proxy's clean end of a broken reply), or held nothing at all."""
        received = bool(self._text or self._reasoning or self._calls or self._reasoning_items)
        if self.finish_reason is None or not (received or self.usage is not None):
            raise StreamEndedEarly(received=received)
        calls = [
            ToolCallRequest(id=call.call_id, name=call.name, arguments=call.done or "".join(call.arguments))
            for call in sorted(self._calls.values(), key=lambda call: call.index)
        ]
        message = AssistantMessage(
            text="".join(self._text),
            reasoning="".join(self._reasoning) or None,
            tool_calls=calls,
            reasoning_items=self._reasoning_items or None,
        )
        return message, self.finish_reason


def _failed(error: dict[str, Any], data: str) -> ResponseFailed:
    message = error.get("message")
    code = error.get("code")
    return ResponseFailed(str(message) if message else data, str(code) if code else None)
