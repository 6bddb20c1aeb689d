"""The Anthropic Messages wire format of a scripted `Reply`: SSE events, a whole message, error bodies.

Each step becomes content blocks as Anthropic streams them: a reasoning step is one `thinking` block
(`thinking_delta`s, then a `signature_delta`), a text step one `text` block, a tool call one `tool_use`
block (`input_json_delta`s); `finish` is the `message_delta` with the stop reason and the output
tokens; `message_stop` ends a reply that finished.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterator
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

STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use", "content_filter": "refusal"}

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}

Event = tuple[str, dict[str, Any]]


def stream_events(reply: Reply, *, model: str) -> Iterator[Event | Control]:
    """The reply as (event name, payload) pairs, with its sleeps, cut and end left in place.

    Sleeps, a cut or an end before the first content come before `message_start`, as they come before
    the first chunk on the OpenAI wire.
    """
    usage = _usage(reply)
    steps = reply.steps
    lead = 0
    while lead < len(steps) and isinstance(steps[lead], SleepStep | CutStep | EndStep):
        yield steps[lead]  # type: ignore[misc]
        lead += 1
    yield "message_start", {"type": "message_start", "message": _message(model, [], None, usage, output_tokens=1)}
    yield "ping", {"type": "ping"}
    index = 0
    tool_index = 0
    for step in steps[lead:]:
        if isinstance(step, ReasoningStep):
            yield from _block(index, {"type": "thinking", "thinking": "", "signature": ""}, _thinking_deltas(step))
        elif isinstance(step, TextStep):
            deltas = [{"type": "text_delta", "text": piece} for piece in step.pieces]
            yield from _block(index, {"type": "text", "text": ""}, deltas)
        elif isinstance(step, ToolCallStep):
            start = {"type": "tool_use", "id": _tool_id(step, tool_index), "name": step.name, "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": piece} for piece in step.argument_pieces()]
            yield from _block(index, start, deltas)
            tool_index += 1
        elif isinstance(step, FinishStep):
            delta = {"stop_reason": STOP_REASONS[step.finish_reason], "stop_sequence": None}
            yield "message_delta", {"type": "message_delta", "delta": delta, "usage": _delta_usage(usage)}
            continue
        elif isinstance(step, SleepStep | CutStep | EndStep):
            yield step
            continue
        elif isinstance(step, StreamErrorStep):
            yield "error", error_json(step.message, 500, step.error_type)
            yield EndStep()
            continue
        else:
            continue
        index += 1
    yield "message_stop", {"type": "message_stop"}


def _block(index: int, start: dict[str, Any], deltas: list[dict[str, Any]]) -> Iterator[Event]:
    yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": start}
    for delta in deltas:
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
    yield "content_block_stop", {"type": "content_block_stop", "index": index}


def _thinking_deltas(step: ReasoningStep) -> list[dict[str, Any]]:
    deltas: list[dict[str, Any]] = [{"type": "thinking_delta", "thinking": piece} for piece in step.pieces]
    return [*deltas, {"type": "signature_delta", "signature": step.signature}]


def _tool_id(step: ToolCallStep, index: int) -> str:
    return step.id or f"toolu_{index}"


def _usage(reply: Reply) -> UsageStep:
    usages = [step for step in reply.steps if isinstance(step, UsageStep)]
    return usages[-1] if usages else UsageStep()


def _start_usage(usage: UsageStep, output_tokens: int) -> dict[str, int]:
    uncached = usage.prompt_tokens - usage.cache_read_tokens - usage.cache_creation_tokens
    return {
        "input_tokens": uncached,
        "cache_creation_input_tokens": usage.cache_creation_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
        "output_tokens": output_tokens,
    }


def _delta_usage(usage: UsageStep) -> dict[str, int]:
    return {"output_tokens": usage.completion_tokens}


def _message(
    model: str, content: list[dict[str, Any]], stop_reason: str | None, usage: UsageStep, output_tokens: int
) -> dict[str, Any]:
    return {
        "id": f"msg_{uuid.uuid4().hex[:12]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": _start_usage(usage, output_tokens),
    }


def message_body(reply: Reply, *, model: str) -> dict[str, Any]:
    """The whole reply as one non-streaming Messages API response."""
    content: list[dict[str, Any]] = []
    tool_index = 0
    for step in reply.steps:
        if isinstance(step, ReasoningStep):
            content.append({"type": "thinking", "thinking": "".join(step.pieces), "signature": step.signature})
        elif isinstance(step, TextStep):
            content.append({"type": "text", "text": "".join(step.pieces)})
        elif isinstance(step, ToolCallStep):
            tool = {"type": "tool_use", "id": _tool_id(step, tool_index), "name": step.name}
            content.append({**tool, "input": json.loads(step.arguments or "{}")})
            tool_index += 1
    finishes = [s.finish_reason for s in reply.steps if isinstance(s, FinishStep)]
    usage = _usage(reply)
    stop_reason = STOP_REASONS[finishes[-1]] if finishes else "end_turn"
    return _message(model, content, stop_reason, usage, output_tokens=usage.completion_tokens)


def error_json(message: str, status: int, error_type: str | None = None) -> dict[str, Any]:
    """An Anthropic-style error body; `error_type` defaults to one that fits the status."""
    kind = error_type or _ERROR_TYPES.get(status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


# Prompt caching as Anthropic does it (https://docs.claude.com/en/docs/build-with-claude/prompt-caching): the prompt is
# its tools, then its system blocks, then its messages' content blocks, in order; a block marked `cache_control` is a
# breakpoint, where the prefix up to it is written to the cache (when it is at least the model's minimum). A request
# reads the longest cached prefix that ends at a block boundary at most 20 blocks before one of its breakpoints,
# exactly as an earlier request wrote it. Usage: the reads as `cache_read_input_tokens`, what it wrote after them up
# to its last breakpoint as `cache_creation_input_tokens`, the rest as `input_tokens`.
ANTHROPIC_CACHE_MIN_TOKENS = 1024  # Sonnet and Opus; Haiku caches from 2,048 (4,096 for Haiku 4.5)
LOOKBACK_BLOCKS = 20
MAX_BREAKPOINTS = 4


def _blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    blocks = [*(body.get("tools") or [])]
    system = body.get("system")
    blocks += [{"type": "text", "text": system}] if isinstance(system, str) else [*(system or [])]
    for message in body.get("messages") or []:
        content = message.get("content")
        blocks += [{"type": "text", "text": content}] if isinstance(content, str) else [*(content or [])]
    return blocks


def cache_usage(body: dict[str, Any], cached: set[str], min_tokens: int = ANTHROPIC_CACHE_MIN_TOKENS) -> UsageStep:
    """The request's prompt tokens and what of them were read from and written to `cached` (the prefixes written
    by earlier requests), which gets this request's writes. Raises `ValueError` past 4 breakpoints, as Anthropic."""
    blocks = _blocks(body)
    ends: list[int] = []  # the tokens of the prefix ending with each block
    prefixes: list[str] = []  # and its digest (each prefix whole would take memory quadratic in its length)
    length, digest = 0, hashlib.sha256()
    for block in blocks:
        text = json.dumps({k: v for k, v in block.items() if k != "cache_control"}, sort_keys=True)
        length += len(text)
        digest.update(text.encode())
        ends.append(length // 4)
        prefixes.append(digest.copy().hexdigest())
    breakpoints = [i for i, block in enumerate(blocks) if "cache_control" in block]
    if len(breakpoints) > MAX_BREAKPOINTS:
        raise ValueError(f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided.")
    read = 0
    for point in breakpoints:
        for i in range(point, max(point - LOOKBACK_BLOCKS, 0) - 1, -1):
            if prefixes[i] in cached:
                read = max(read, ends[i])
                break
    written = 0
    for point in breakpoints:
        if ends[point] >= min_tokens and prefixes[point] not in cached:
            cached.add(prefixes[point])
            written = max(written, ends[point] - read)
    total = ends[-1] if ends else 0
    return UsageStep(prompt_tokens=total, cache_read_tokens=read, cache_creation_tokens=max(written, 0))
