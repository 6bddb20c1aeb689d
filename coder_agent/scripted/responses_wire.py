"""The OpenAI Responses API wire format of a scripted `Reply`: SSE events and a whole response.

Each step becomes output items as OpenAI streams them: a reasoning step is one `reasoning` item whose summary
streams as `response.reasoning_summary_text.delta`s (and which carries `encrypted_content` when the request asked
for it with `include`), a text step one assistant `message` item (`response.output_text.delta`s), a tool call one
`function_call` item (`response.function_call_arguments.delta`s, then `.done`). `finish` is the terminal event:
`response.completed` (stop, tool calls) or `response.incomplete` (length, content filter), with the usage; a
stream error is `response.failed`. Every event is named (`event: <type>`) and numbered (`sequence_number`), and
the stream ends after the terminal event, without `[DONE]`. What the server checks and remembers across
requests (the encrypted reasoning it minted, the prompt cache) is `responses_state.py`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from coder_agent.scripted.script import (
    CutStep,
    EndStep,
    FinishStep,
    ReasoningStep,
    Reply,
    SleepStep,
    StreamErrorStep,
    TextStep,
    ToolCallStep,
    UsageStep,
)
from coder_agent.scripted.wire import Control

Event = tuple[str, dict[str, Any]]

# finish reason -> (terminal event, `incomplete_details.reason`)
_TERMINAL = {
    "stop": ("response.completed", None),
    "tool_calls": ("response.completed", None),
    "length": ("response.incomplete", "max_output_tokens"),
    "content_filter": ("response.incomplete", "content_filter"),
}


@dataclass(frozen=True)
class Request:
    """What of the request and the server shapes the reply."""

    model: str
    number: int  # the request's place among the server's Responses requests: ids are made from it
    cached_tokens: int  # the prompt cache's matched prefix (`responses_state`), when the script names none
    # a reasoning item's id -> its encrypted content when the request asked for it (the server remembers it)
    reasoning_made: Callable[[str], str | None]

    def id(self, prefix: str, index: int | None = None) -> str:
        """An id as OpenAI's look (`rs_…`, `msg_…`, `fc_…`, `call_…`), the same for the same request and output
        item on every server, so two clients' runs of a script can be compared whole."""
        return f"{prefix}_{self.number:04x}" + ("" if index is None else f"i{index:04x}")


def usage_json(usage: UsageStep, cached_tokens: int) -> dict[str, Any]:
    """The Responses API's usage: input tokens (cached ones included), output tokens (reasoning ones included).
    The cached tokens are the script's, else the prompt cache's (at most the input tokens)."""
    cached = usage.cache_read_tokens or min(cached_tokens, usage.prompt_tokens)
    return {
        "input_tokens": usage.prompt_tokens,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": usage.completion_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        "total_tokens": usage.prompt_tokens + usage.completion_tokens,
    }


def _usage(reply: Reply) -> UsageStep:
    usages = [step for step in reply.steps if isinstance(step, UsageStep)]
    return usages[-1] if usages else UsageStep()


def _response(request: Request, response_id: str, status: str, output: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "error": None,
        "incomplete_details": None,
        "model": request.model,
        "output": output,
        "parallel_tool_calls": True,
        "usage": None,
    }


class _Items:
    """The reply's output items, built one step at a time: each as its events, and whole."""

    def __init__(self, request: Request) -> None:
        self.request = request
        self.output: list[dict[str, Any]] = []

    def reasoning(self, step: ReasoningStep) -> Iterator[Event]:
        index = len(self.output)
        item_id = self.request.id("rs", index)
        text = "".join(step.pieces)
        yield "response.output_item.added", {"output_index": index, "item": _reasoning_item(item_id, [])}
        where = {"item_id": item_id, "output_index": index, "summary_index": 0}
        yield "response.reasoning_summary_part.added", {**where, "part": {"type": "summary_text", "text": ""}}
        for piece in step.pieces:
            yield "response.reasoning_summary_text.delta", {**where, "delta": piece}
        yield "response.reasoning_summary_text.done", {**where, "text": text}
        yield "response.reasoning_summary_part.done", {**where, "part": {"type": "summary_text", "text": text}}
        item = _reasoning_item(item_id, [{"type": "summary_text", "text": text}])
        encrypted = self.request.reasoning_made(item_id)
        if encrypted is not None:
            item["encrypted_content"] = encrypted
        yield from self._done(item)

    def text(self, step: TextStep) -> Iterator[Event]:
        index = len(self.output)
        item_id = self.request.id("msg", index)
        text = "".join(step.pieces)
        yield "response.output_item.added", {"output_index": index, "item": _message_item(item_id, None)}
        where = {"item_id": item_id, "output_index": index, "content_index": 0}
        yield "response.content_part.added", {**where, "part": _output_text("")}
        for piece in step.pieces:
            yield "response.output_text.delta", {**where, "delta": piece, "logprobs": []}
        yield "response.output_text.done", {**where, "text": text, "logprobs": []}
        yield "response.content_part.done", {**where, "part": _output_text(text)}
        yield from self._done(_message_item(item_id, text))

    def tool_call(self, step: ToolCallStep) -> Iterator[Event]:
        index = len(self.output)
        item_id, call_id = self.request.id("fc", index), step.id or self.request.id("call", index)
        added = _call_item(item_id, call_id, step.name, "", "in_progress")
        yield "response.output_item.added", {"output_index": index, "item": added}
        for piece in step.argument_pieces():
            yield "response.function_call_arguments.delta", {"item_id": item_id, "output_index": index, "delta": piece}
        done = {"item_id": item_id, "output_index": index, "name": step.name, "arguments": step.arguments}
        yield "response.function_call_arguments.done", done
        yield from self._done(_call_item(item_id, call_id, step.name, step.arguments, "completed"))

    def _done(self, item: dict[str, Any]) -> Iterator[Event]:
        yield "response.output_item.done", {"output_index": len(self.output), "item": item}
        self.output.append(item)


def _reasoning_item(item_id: str, summary: list[dict[str, Any]]) -> dict[str, Any]:
    return {"id": item_id, "type": "reasoning", "summary": summary}


def _output_text(text: str) -> dict[str, Any]:
    return {"type": "output_text", "annotations": [], "logprobs": [], "text": text}


def _message_item(item_id: str, text: str | None) -> dict[str, Any]:
    content = [] if text is None else [_output_text(text)]
    status = "in_progress" if text is None else "completed"
    return {"id": item_id, "type": "message", "status": status, "role": "assistant", "content": content}


def _call_item(item_id: str, call_id: str, name: str, arguments: str, status: str) -> dict[str, Any]:
    return {
        "id": item_id,
        "type": "function_call",
        "status": status,
        "arguments": arguments,
        "call_id": call_id,
        "name": name,
    }


def stream_events(reply: Reply, request: Request) -> Iterator[Event | Control]:
    """The reply as (event type, payload) pairs, with its sleeps, cut and end left in place.

    Sleeps, a cut or an end before the first content come before `response.created`, as the other wires hold
    back their first event; the payloads get their `type` and `sequence_number` when encoded (`encode`).
    """
    usage = _usage(reply)
    steps = reply.steps
    lead = 0
    while lead < len(steps) and isinstance(steps[lead], SleepStep | CutStep | EndStep):
        yield steps[lead]  # type: ignore[misc]
        lead += 1
    response_id = request.id("resp")
    yield "response.created", {"response": _response(request, response_id, "in_progress", [])}
    yield "response.in_progress", {"response": _response(request, response_id, "in_progress", [])}
    items = _Items(request)
    for step in steps[lead:]:
        if isinstance(step, ReasoningStep):
            yield from items.reasoning(step)
        elif isinstance(step, TextStep):
            yield from items.text(step)
        elif isinstance(step, ToolCallStep):
            yield from items.tool_call(step)
        elif isinstance(step, FinishStep):
            name, reason = _TERMINAL[step.finish_reason]
            status = "completed" if reason is None else "incomplete"
            response = _response(request, response_id, status, items.output)
            response["usage"] = usage_json(usage, request.cached_tokens)
            response["incomplete_details"] = None if reason is None else {"reason": reason}
            yield name, {"response": response}
        elif isinstance(step, SleepStep | CutStep | EndStep):
            yield step
        elif isinstance(step, StreamErrorStep):
            response = _response(request, response_id, "failed", items.output)
            response["error"] = {"code": step.error_type, "message": step.message}
            yield "response.failed", {"response": response}
            yield EndStep()


def encode(events: Iterator[Event | Control]) -> Iterator[bytes | Control]:
    """Each event as OpenAI sends it: `event: <type>` and the JSON payload, which repeats the type and numbers
    the event."""
    number = 0
    for event in events:
        if not isinstance(event, tuple):
            yield event
            continue
        name, payload = event
        data = json.dumps({"type": name, "sequence_number": number, **payload})
        number += 1
        yield f"event: {name}\ndata: {data}\n\n".encode()


def response_body(reply: Reply, request: Request) -> dict[str, Any]:
    """The whole reply as one non-streaming Responses API object (what a request without `stream` gets)."""
    whole: dict[str, Any] = {}
    for name, payload in (event for event in stream_events(reply, request) if isinstance(event, tuple)):
        if name in ("response.completed", "response.incomplete", "response.failed"):
            whole = payload["response"]
    return whole or _response(request, request.id("resp"), "completed", [])
