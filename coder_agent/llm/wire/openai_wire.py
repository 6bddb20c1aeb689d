"""The OpenAI Chat Completions request, for OpenAI and every provider that offers it (`dialects.py`). Stdlib only.

The conversation goes as the agent keeps it (`ChatMessage.to_provider`), less what the provider does not take:
fields that are None (an assistant message with only tool calls goes without `content`), Anthropic's signed
thinking blocks (they mean nothing here; OpenRouter's `reasoning_details`, kept in the same place, go back to it),
and the model's reasoning where the provider refuses it. Nothing in the request depends on the moment: the same
conversation is the same bytes, so a provider's prefix cache matches.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .dialects import Dialect

# Where OpenRouter's `reasoning_details` are kept in the history (`AssistantMessage.thinking_blocks`).
REASONING_DETAIL_PREFIX = "reasoning."


def _message(message: Mapping[str, Any], dialect: Dialect) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in message.items():
        if value is None:
            continue
        if key == "thinking_blocks":
            details = [b for b in value if str(b.get("type", "")).startswith(REASONING_DETAIL_PREFIX)]
            if details and dialect.reasoning_details_back:
                out["reasoning_details"] = details
            continue
        if key == "reasoning_content" and not dialect.reasoning_back:
            continue
        if key == "content" and dialect.text_only and isinstance(value, list):
            value = "\n\n".join(p["text"] for p in value if p.get("type") == "text")  # images dropped, as litellm does
        out[key] = value
    return out


def chat_body(
    dialect: Dialect,
    model: str,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    *,
    max_tokens: int | None,
    reasoning_effort: str | None,
    cache_key: str | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {"messages": [_message(m, dialect) for m in messages], "model": model}
    if max_tokens:
        body[dialect.max_tokens_field] = max_tokens
    if reasoning_effort and dialect.effort == "reasoning_effort":
        body["reasoning_effort"] = reasoning_effort
    elif reasoning_effort and dialect.effort == "reasoning":
        body["reasoning"] = {"effort": reasoning_effort}
    body["stream"] = True
    if dialect.stream_usage:
        body["stream_options"] = {"include_usage": True}
    if tools:
        body["tools"] = list(tools)
    if cache_key and dialect.cache_key:
        body["prompt_cache_key"] = cache_key
    if dialect.breakpoints_for and model.startswith(dialect.breakpoints_for):
        _mark_cache(body["messages"])
    body.update(dialect.extra)
    return body


def _mark_cache(messages: list[dict[str, Any]]) -> None:
    """Anthropic's cache breakpoints, where a provider passes them on (OpenRouter, for Claude): the end of the system
    prompt and of the two newest user turns, as on Anthropic's own wire (`anthropic_request`)."""
    system = [m for m in messages if m.get("role") == "system"][:1]
    users = [m for m in messages if m.get("role") in ("user", "tool")][-2:]
    for message in [*system, *users]:
        content = message.get("content")
        if isinstance(content, str) and content:
            message["content"] = [{"type": "text", "text": content, "cache_control": {"type": "ephemeral"}}]
        elif isinstance(content, list) and content and isinstance(content[-1], dict):
            content[-1] = {**content[-1], "cache_control": {"type": "ephemeral"}}


def openai_headers(api_key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json", "Accept": "application/json"}


def error_message(payload: Any) -> tuple[str | None, str | None]:
    """(message, type) from an OpenAI-style error body `{"error": {"message": ..., "type": ...}}`."""
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, dict):
        message = error.get("message")
        kind = error.get("type")
        return (str(message) if message is not None else None), (str(kind) if kind is not None else None)
    if isinstance(error, str):
        return error, None
    return None, None
