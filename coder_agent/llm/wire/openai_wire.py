"""The OpenAI chat-completions request of the direct path, as litellm 1.106.2 sends it for the openai provider."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def openai_body(
    model: str,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    *,
    max_tokens: int | None,
    reasoning_effort: str | None,
    extra: Mapping[str, Any] | None = None,
    drop: tuple[str, ...] = (),
) -> dict[str, Any]:
    # litellm passes our messages through as they are, less the fields that are None (an assistant
    # message with only tool calls goes without `content`) and those a provider drops (`drop`).
    body: dict[str, Any] = {
        "messages": [{k: v for k, v in m.items() if v is not None and k not in drop} for m in messages],
        "model": model,
    }
    if max_tokens:
        body["max_tokens"] = max_tokens
    if reasoning_effort:
        body["reasoning_effort"] = reasoning_effort
    body["stream"] = True
    body["stream_options"] = {"include_usage": True}
    if tools:
        body["tools"] = list(tools)
    body.update(extra or {})
    return body


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
