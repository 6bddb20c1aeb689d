"""The OpenAI wire format of a scripted `Reply`: stream chunks, a whole completion, error bodies."""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Iterable, Iterator
from typing import Any

from coder_agent.scripted.script import (
    CutStep,
    EndStep,
    FinishStep,
    ReasoningStep,
    Reply,
    SleepStep,
    Step,
    StreamErrorStep,
    TextStep,
    ToolCallStep,
    UsageStep,
)

Control = SleepStep | CutStep | EndStep


def stream_events(reply: Reply, *, model: str, include_usage: bool) -> Iterator[dict[str, Any] | Control]:
    """The reply as `chat.completion.chunk` payloads, with its sleeps, cut and end left in place."""
    base: dict[str, Any] = {"id": _completion_id(), "object": "chat.completion.chunk"}
    base |= {"created": int(time.time()), "model": model}
    first = True

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        nonlocal first
        if first:
            delta, first = {"role": "assistant", **delta}, False
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        return {**base, "choices": [choice]} | ({"usage": None} if include_usage else {})

    usage: UsageStep | None = None
    for index, step in _indexed(reply):
        if isinstance(step, TextStep):
            yield from (chunk({"content": piece}) for piece in step.pieces)
        elif isinstance(step, ReasoningStep):
            yield from (chunk({step.field: piece}) for piece in step.pieces)
        elif isinstance(step, ToolCallStep):
            for n, piece in enumerate(step.argument_pieces()):
                call: dict[str, Any] = {"index": index, "function": {"arguments": piece}}
                if n == 0:
                    call |= {"id": step.id or f"call_{index}", "type": "function"}
                    call["function"]["name"] = step.name
                    if step.extra is not None:
                        call["extra_content"] = step.extra
                yield chunk({"tool_calls": [call]})
        elif isinstance(step, FinishStep):
            yield chunk({}, step.finish_reason)
        elif isinstance(step, UsageStep):
            usage = step
        elif isinstance(step, SleepStep | CutStep | EndStep):
            yield step
        elif isinstance(step, StreamErrorStep):
            yield {"error": {"message": step.message, "type": step.error_type, "code": None}}
            yield EndStep()
    if include_usage and usage is not None:
        yield {**base, "choices": [], "usage": _usage_json(usage)}


def completion_body(reply: Reply, *, model: str) -> dict[str, Any]:
    """The whole reply as one non-streaming `chat.completion` object."""
    steps = reply.steps
    text = "".join(p for s in steps if isinstance(s, TextStep) for p in s.pieces)
    reasoning = "".join(p for s in steps if isinstance(s, ReasoningStep) for p in s.pieces)
    calls = [
        {
            "id": s.id or f"call_{i}",
            "type": "function",
            "function": {"name": s.name, "arguments": s.arguments},
        }
        for i, s in _indexed(reply)
        if isinstance(s, ToolCallStep)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if reasoning:
        message["reasoning_content"] = reasoning
    if calls:
        message["tool_calls"] = calls
    finishes = [s.finish_reason for s in steps if isinstance(s, FinishStep)]
    usages = [s for s in steps if isinstance(s, UsageStep)]
    return {
        "id": _completion_id(),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": finishes[-1] if finishes else "stop",
            }
        ],
        "usage": _usage_json(usages[-1] if usages else UsageStep()),
    }


def _indexed(reply: Reply) -> Iterator[tuple[int, Step]]:
    """Steps paired with their tool-call index (the number of tool calls before them)."""
    index = 0
    for step in reply.steps:
        yield index, step
        index += isinstance(step, ToolCallStep)


def _completion_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex[:12]}"


def _usage_json(usage: UsageStep) -> dict[str, Any]:
    total = usage.prompt_tokens + usage.completion_tokens
    payload: dict[str, Any] = {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": total,
    }
    if usage.cache_read_tokens:
        payload["prompt_tokens_details"] = {"cached_tokens": usage.cache_read_tokens}
    return payload


# litellm classifies by message text before status: any error mentioning "invalid_request_error"
# becomes a BadRequestError whatever its status, so only 400 uses that type by default.
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
}


def error_json(message: str, status: int, error_type: str | None = None) -> dict[str, Any]:
    """An OpenAI-style error body; `error_type` defaults to one that fits the status."""
    kind = error_type or _ERROR_TYPES.get(status, "server_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


# Prompt caching as OpenAI does it (https://platform.openai.com/docs/guides/prompt-caching): automatic, for the
# longest prefix of the prompt (its tools, then its messages, in order) that an earlier request began with, counted
# in 128-token steps from 1,024 tokens on; reported as `prompt_tokens_details.cached_tokens`. Tokens are the server's
# estimate (4 characters each), as everywhere here.
OPENAI_CACHE_MIN_TOKENS = 1024
OPENAI_CACHE_STEP = 128


def prompt_text(body: dict[str, Any]) -> str:
    """The prompt as the cache sees it: the tools, then each message, as they were sent."""
    parts = [json.dumps(tool, sort_keys=True) for tool in body.get("tools") or []]
    parts += [json.dumps(message, sort_keys=True) for message in body.get("messages") or []]
    return "".join(parts)


def cached_tokens(prompt: str, earlier: Iterable[str]) -> int:
    """The tokens of `prompt` read from the cache: its longest prefix an earlier prompt began with, in steps."""
    # Strings, not paths: their common start, character by character.
    longest = max((len(os.path.commonprefix([prompt, seen])) for seen in earlier), default=0)  # noqa: RUF071
    tokens = longest // 4
    if tokens < OPENAI_CACHE_MIN_TOKENS:
        return 0
    return OPENAI_CACHE_MIN_TOKENS + (tokens - OPENAI_CACHE_MIN_TOKENS) // OPENAI_CACHE_STEP * OPENAI_CACHE_STEP
