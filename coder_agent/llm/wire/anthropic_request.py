"""Our OpenAI-style conversation -> an Anthropic Messages request body, converted as litellm 1.106.2 does.

What this reproduces of litellm's `anthropic_messages_pt` and `AnthropicConfig.transform_request`:
the leading system message becomes top-level `system` blocks; consecutive user and tool messages merge
into one user turn (tool results first, as they come), consecutive assistant messages into one assistant
turn (signed thinking blocks first, then text, then `tool_use` with parsed arguments); empty text
becomes litellm's placeholder; the last assistant turn loses trailing whitespace; tools become
`custom` tools with a cleaned `input_schema`; `max_tokens` defaults to the model's output limit.
Anything outside what our history holds raises `NeedsLiteLLM`, and that call goes through litellm.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .price_map import PriceMap

EMPTY_TEXT_PLACEHOLDER = "[System: Empty message content sanitised to satisfy protocol]"
DEFAULT_MAX_TOKENS = 4096  # litellm's DEFAULT_ANTHROPIC_CHAT_MAX_TOKENS
_SCHEMA_KEYS = ("type", "properties", "additionalProperties", "required", "$defs", "strict")
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
_INVALID_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
_THINKING_KEYS = {"type", "thinking", "signature"}
_REDACTED_KEYS = {"type", "data"}


class NeedsLiteLLM(Exception):
    """The request holds something we do not convert exactly as litellm would: send it through litellm."""


def max_tokens_for(model: str, prices: PriceMap) -> int:
    """litellm's default `max_tokens` for an Anthropic model: its output limit in the map, else 4096."""
    entry = prices.entry(model)
    if entry is not None:
        limit = entry.get("max_output_tokens", entry.get("max_tokens"))
        if isinstance(limit, int):
            return limit
    return int(os.environ.get("DEFAULT_ANTHROPIC_CHAT_MAX_TOKENS", DEFAULT_MAX_TOKENS))


def anthropic_body(
    model: str,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    max_tokens: int,
) -> dict[str, Any]:
    system: list[dict[str, Any]] = []
    rest = list(messages)
    while rest and rest[0].get("role") == "system":
        system.append(_system_block(rest.pop(0)))
    body: dict[str, Any] = {"model": model, "messages": _messages(rest)}
    if tools:
        body["tools"] = [_tool(tool) for tool in tools]
    if system:
        body["system"] = system
    body["max_tokens"] = max_tokens
    body["stream"] = True
    return body


def _system_block(message: Mapping[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if not isinstance(content, str) or not content or set(message) - {"role", "content"}:
        raise NeedsLiteLLM("a system message that is not plain text")
    return {"type": "text", "text": content}


def _tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    function = tool.get("function")
    if tool.get("type") != "function" or not isinstance(function, Mapping):
        raise NeedsLiteLLM("a tool that is not a function")
    name = function.get("name")
    if not isinstance(name, str) or not _TOOL_NAME.match(name):
        raise NeedsLiteLLM("a tool name litellm would rewrite")
    schema = dict(function.get("parameters") or {})
    if any(key in schema for key in ("definitions", "components", "eager_input_streaming")):
        raise NeedsLiteLLM("a tool schema litellm would rewrite")
    if schema.get("type") != "object":
        schema["type"] = "object"
    schema.setdefault("properties", {})
    converted: dict[str, Any] = {
        "name": name,
        "input_schema": {key: schema[key] for key in _SCHEMA_KEYS if key in schema},
        "type": "custom",
    }
    if function.get("description") is not None:
        converted["description"] = function["description"]
    return converted


def _messages(messages: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    converted: list[dict[str, Any]] = []
    i = 0
    while i < len(messages):
        start = i
        user: list[dict[str, Any]] = []
        while i < len(messages) and messages[i].get("role") in ("user", "tool"):
            user.extend(_user_blocks(messages[i]))
            i += 1
        if user:
            converted.append({"role": "user", "content": user})
        assistant: list[dict[str, Any]] = []
        tool_ids: set[str] = set()
        while i < len(messages) and messages[i].get("role") == "assistant":
            assistant.extend(_assistant_blocks(messages[i], tool_ids))
            i += 1
        if assistant:
            converted.append({"role": "assistant", "content": assistant})
        if i == start:
            raise NeedsLiteLLM(f"a {messages[i].get('role')!r} message after the first turn")
    if converted and converted[-1]["role"] == "assistant":
        for block in converted[-1]["content"]:
            if block.get("type") == "text":
                block["text"] = block["text"].rstrip()
    return converted


def _text(text: str) -> str:
    return text if text.strip() else EMPTY_TEXT_PLACEHOLDER


def _user_blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    if message.get("role") == "tool":
        content = message.get("content")
        if not isinstance(content, str) or set(message) - {"role", "tool_call_id", "content"}:
            raise NeedsLiteLLM("a tool result that is not plain text")
        tool_id = _INVALID_ID_CHARS.sub("_", str(message.get("tool_call_id") or ""))
        if not tool_id:
            raise NeedsLiteLLM("a tool result without an id")
        return [{"type": "tool_result", "tool_use_id": tool_id, "content": content}]
    if set(message) - {"role", "content"}:
        raise NeedsLiteLLM("a user message with extra fields")
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": _text(content)}]
    if not isinstance(content, list):
        raise NeedsLiteLLM("a user message without content")
    blocks: list[dict[str, Any]] = []
    for part in content:
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind == "text" and set(part) == {"type", "text"}:
            blocks.append({"type": "text", "text": _text(part["text"])})
        elif kind == "image_url" and set(part) == {"type", "image_url"}:
            blocks.append(_image(part["image_url"]))
        else:
            raise NeedsLiteLLM(f"a user content part of type {kind!r}")
    return blocks


def _image(image_url: Any) -> dict[str, Any]:
    url = image_url.get("url") if isinstance(image_url, Mapping) and set(image_url) == {"url"} else None
    if not isinstance(url, str) or not url.startswith("data:image/") or ";base64," not in url:
        raise NeedsLiteLLM("an image that is not a base64 data URL")
    media_type, data = url[len("data:") :].split(";base64,", 1)
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


def _assistant_blocks(message: Mapping[str, Any], tool_ids: set[str]) -> list[dict[str, Any]]:
    if set(message) - {"role", "content", "tool_calls", "reasoning_content", "thinking_blocks"}:
        raise NeedsLiteLLM("an assistant message with extra fields")
    blocks: list[dict[str, Any]] = []
    for block in message.get("thinking_blocks") or ():
        blocks.extend(_thinking(block))
    content = message.get("content")
    if isinstance(content, str):  # litellm turns empty text into its placeholder first, so it is never dropped
        blocks.append({"type": "text", "text": _text(content)})
    elif content is not None:
        raise NeedsLiteLLM("assistant content that is not text")
    for call in message.get("tool_calls") or ():
        use = _tool_use(call)
        if use["id"] in tool_ids:
            continue
        tool_ids.add(use["id"])
        blocks.append(use)
    return blocks


def _thinking(block: Any) -> list[dict[str, Any]]:
    if not isinstance(block, Mapping):
        raise NeedsLiteLLM("a thinking block that is not an object")
    kind = block.get("type")
    if kind == "thinking" and set(block) <= _THINKING_KEYS:
        signature = block.get("signature")
        return [dict(block)] if isinstance(signature, str) and signature else []  # unsigned: Anthropic rejects it
    if kind == "redacted_thinking" and set(block) <= _REDACTED_KEYS:
        return [dict(block)]
    raise NeedsLiteLLM(f"a thinking block of type {kind!r}")


def _tool_use(call: Any) -> dict[str, Any]:
    function = call.get("function") if isinstance(call, Mapping) else None
    if call.get("type") != "function" or not isinstance(function, Mapping):
        raise NeedsLiteLLM("a tool call that is not a function call")
    call_id = str(call.get("id") or "")
    if not call_id or call_id.startswith("srvtoolu_"):
        raise NeedsLiteLLM("a server tool call")
    arguments = function.get("arguments")
    try:
        parsed = json.loads(arguments) if arguments else {}
    except (TypeError, ValueError):
        raise NeedsLiteLLM("tool call arguments that are not JSON") from None
    tool_id = _INVALID_ID_CHARS.sub("_", call_id)
    return {"type": "tool_use", "id": tool_id, "name": function.get("name"), "input": parsed}
