"""The Anthropic Messages request, from the conversation as the agent keeps it (`ChatMessage.to_provider`). Stdlib only.

The conversion is litellm's where litellm's works (the contract suite compares the two): the leading system message
becomes top-level `system` blocks; consecutive user and tool messages merge into one user turn (tool results first,
as they come), consecutive assistant messages into one assistant turn (signed thinking blocks first, then text, then
`tool_use` with parsed arguments); empty text becomes a placeholder; the last assistant turn loses trailing
whitespace; tools become `custom` tools with a cleaned `input_schema`; `max_tokens` defaults to the model's output
limit. Where it is ours on purpose:

- Prompt caching. A breakpoint (`cache_control`) ends the system prompt (so tools and system are read from the cache
  on every call), and the last block of each of the two newest user turns: the newest is written for the next call,
  the one before it is the breakpoint the previous call wrote, read back exactly (Anthropic looks back only 20
  blocks from a breakpoint, fewer than a turn of parallel tool calls can add). Three of the four allowed.
- Thinking. A reasoning effort becomes adaptive thinking (`{"type": "adaptive"}` and `output_config.effort`) on the
  models that think adaptively, else a thinking budget (1,024 / 2,048 / 4,096 tokens, as litellm maps them), with
  `max_tokens` above it. Signed thinking blocks go back as they came. When the turn being continued began without
  thinking (the level was raised mid-turn), the API refuses thinking for that call: it goes without.
- Nothing is refused: a part the wire has no block for is sent as text saying what it was.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

EMPTY_TEXT_PLACEHOLDER = "[System: Empty message content sanitised to satisfy protocol]"
DEFAULT_MAX_TOKENS = 4096  # litellm's DEFAULT_ANTHROPIC_CHAT_MAX_TOKENS, for a model the map does not know
THINKING_BUDGETS = {"minimal": 1024, "low": 1024, "medium": 2048, "high": 4096}  # litellm's
EFFORTS = {"minimal": "low", "low": "low", "medium": "medium", "high": "high"}  # adaptive thinking's `effort`
CACHE = {"type": "ephemeral"}
_SCHEMA_KEYS = ("type", "properties", "additionalProperties", "required", "$defs", "definitions", "strict")
_INVALID_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
_THINKING_TYPES = ("thinking", "redacted_thinking")


def anthropic_body(
    model: str,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    *,
    max_tokens: int | None,
    output_limit: int | None,
    effort: str | None = None,
    adaptive: bool = False,
    cache: bool = True,
) -> dict[str, Any]:
    system: list[dict[str, Any]] = []
    rest = list(messages)
    while rest and rest[0].get("role") == "system":
        system.append({"type": "text", "text": _text(_plain(rest.pop(0).get("content")))})
    converted = _messages(rest)
    body: dict[str, Any] = {"model": model, "messages": converted}
    if tools:
        body["tools"] = [_tool(tool) for tool in tools]
    if system:
        body["system"] = system
    limit = max_tokens or output_limit or DEFAULT_MAX_TOKENS
    if effort and effort != "off" and _may_think(converted):
        if adaptive:
            body["thinking"] = {"type": "adaptive", "display": "summarized"}
            body["output_config"] = {"effort": EFFORTS.get(effort, "high")}
        else:
            budget = THINKING_BUDGETS.get(effort, THINKING_BUDGETS["high"])
            body["thinking"] = {"type": "enabled", "budget_tokens": budget}
            if limit <= budget:
                limit = budget + limit  # the answer after the thinking needs room too
    body["max_tokens"] = limit
    body["stream"] = True
    if cache:
        _mark_cache(body)
    return body


def _mark_cache(body: dict[str, Any]) -> None:
    """The breakpoints: the end of the system prompt (else of the tools), and the two newest user turns."""
    if body.get("system"):
        body["system"][-1]["cache_control"] = CACHE
    elif body.get("tools"):
        body["tools"][-1]["cache_control"] = CACHE
    users = [m for m in body["messages"] if m["role"] == "user" and m["content"]]
    for message in users[-2:]:
        message["content"][-1]["cache_control"] = CACHE


def _may_think(messages: list[dict[str, Any]]) -> bool:
    """Whether thinking may be on: not when the call continues a tool loop whose assistant turn did not think."""
    if len(messages) < 2 or messages[-2]["role"] != "assistant":
        return True
    last, previous = messages[-1]["content"], messages[-2]["content"]
    if not all(block.get("type") == "tool_result" for block in last):
        return True
    return bool(previous) and previous[0].get("type") in _THINKING_TYPES


def _plain(content: Any) -> str:
    """Text content, whether a string or a list of text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n\n".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return ""


def _tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    nested = tool.get("function")
    function: Mapping[str, Any] = nested if isinstance(nested, Mapping) else tool
    schema = dict(function.get("parameters") or {})
    if schema.get("type") != "object":
        schema["type"] = "object"
    schema.setdefault("properties", {})
    converted: dict[str, Any] = {
        "name": function.get("name"),
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
        user: list[dict[str, Any]] = []
        while i < len(messages) and messages[i].get("role") != "assistant":
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
    if converted and converted[-1]["role"] == "assistant":
        for block in converted[-1]["content"]:
            if block.get("type") == "text":
                block["text"] = block["text"].rstrip()
    return converted


def _text(text: str) -> str:
    return text if text.strip() else EMPTY_TEXT_PLACEHOLDER


def _user_blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if message.get("role") == "tool":
        tool_id = _INVALID_ID_CHARS.sub("_", str(message.get("tool_call_id") or ""))
        return [{"type": "tool_result", "tool_use_id": tool_id, "content": _plain(content)}]
    if message.get("role") == "system":  # a system message later in the conversation: a note in the user's turn
        return [{"type": "text", "text": _text(_plain(content))}]
    if isinstance(content, str):
        return [{"type": "text", "text": _text(content)}]
    blocks: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else ():
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind == "text":
            blocks.append({"type": "text", "text": _text(str(part.get("text", "")))})
        elif kind == "image_url":
            blocks.append(_image(part.get("image_url")))
        else:
            blocks.append({"type": "text", "text": f"[a {kind} part the model cannot be sent]"})
    return blocks or [{"type": "text", "text": EMPTY_TEXT_PLACEHOLDER}]


def _image(image_url: Any) -> dict[str, Any]:
    url = image_url.get("url") if isinstance(image_url, Mapping) else image_url
    if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
        media_type, data = url[len("data:") :].split(";base64,", 1)
        return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}
    return {"type": "image", "source": {"type": "url", "url": str(url)}}


def _assistant_blocks(message: Mapping[str, Any], tool_ids: set[str]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in message.get("thinking_blocks") or ():
        blocks.extend(_thinking(block))
    content = message.get("content")
    if isinstance(content, str):  # litellm turns empty text into its placeholder first, so it is never dropped
        blocks.append({"type": "text", "text": _text(content)})
    for call in message.get("tool_calls") or ():
        use = _tool_use(call)
        if use["id"] in tool_ids:
            continue
        tool_ids.add(use["id"])
        blocks.append(use)
    return blocks


def _thinking(block: Any) -> list[dict[str, Any]]:
    """A signed thinking block as it came (an unsigned one is refused by the API: left out), a redacted one as it
    came; anything else kept in the same place (another provider's reasoning) is not Anthropic's."""
    if not isinstance(block, Mapping):
        return []
    if block.get("type") == "thinking":
        signature = block.get("signature")
        if not isinstance(signature, str) or not signature:
            return []
        return [{"type": "thinking", "thinking": block.get("thinking", ""), "signature": signature}]
    if block.get("type") == "redacted_thinking" and block.get("data"):
        return [{"type": "redacted_thinking", "data": block["data"]}]
    return []


def _tool_use(call: Mapping[str, Any]) -> dict[str, Any]:
    function = call.get("function") or {}
    arguments = function.get("arguments")
    try:
        parsed = json.loads(arguments) if arguments else {}
    except (TypeError, ValueError):
        parsed = {"_unparsed_arguments": arguments}  # the model wrote broken JSON; its tool call was answered so
    if not isinstance(parsed, dict):
        parsed = {"_arguments": parsed}
    tool_id = _INVALID_ID_CHARS.sub("_", str(call.get("id") or ""))
    return {"type": "tool_use", "id": tool_id, "name": function.get("name"), "input": parsed}
