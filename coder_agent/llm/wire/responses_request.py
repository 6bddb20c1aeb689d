"""The OpenAI Responses API request (`POST /responses`) for GPT-5 and o-series models. Stdlib only.

Made from the conversation in its provider form (`ChatMessage.to_provider()`, with each assistant message's
`reasoning_items`, named as litellm names them), in the shapes litellm 1.106.2's Responses bridge sends: the
leading system messages become `instructions`, user and assistant text `message` items, tool calls
`function_call` items and their answers `function_call_output` items, each assistant turn's reasoning items
just before its message and calls. The contract tests (`tests/llm/test_responses_contract.py`) compare the two
and say where this differs on purpose:

- reasoning is kept across turns statelessly: `store: false` and `include: ["reasoning.encrypted_content"]`, so
  each reasoning item comes back with its encrypted content and is sent back verbatim. `previous_response_id`
  would keep it on OpenAI's side instead, but breaks as soon as the history is not the one OpenAI stored (a
  compaction, an undo, a fork, a session loaded on another machine) and is refused to zero-data-retention
  organisations; the history is ours, so the request carries it whole (the prompt cache keeps that cheap);
- `reasoning.summary: "auto"`: without it the model's thinking is never streamed, and the user sees nothing
  while it thinks (litellm sends it only with `LITELLM_REASONING_AUTO_SUMMARY`);
- function tools are sent with `strict: false` (the Responses API makes a tool strict by default, and strict
  mode refuses the schemas of tools with optional arguments) and without the fields that are null;
- `prompt_cache_key`: one per session, so OpenAI routes the session's requests to the cache holding its prefix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

ENCRYPTED_REASONING = "reasoning.encrypted_content"


def responses_body(
    model: str,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    *,
    reasoning: bool,
    effort: str | None,
    summary: bool = True,
    max_tokens: int | None = None,
    cache_key: str | None = None,
) -> dict[str, Any]:
    """The body to post. `reasoning`: whether the model reasons (it then gets the `reasoning` options and sends its
    reasoning back encrypted); `summary`: whether to ask for its thinking's summary (see the module docstring)."""
    instructions, items = input_items(messages)
    body: dict[str, Any] = {"model": model}
    if instructions is not None:
        body["instructions"] = instructions
    body["input"] = items
    if tools:
        body["tools"] = [function_tool(tool) for tool in tools]
    if reasoning:
        options: dict[str, str] = {}
        if effort:
            options["effort"] = effort
        if summary:
            options["summary"] = "auto"
        if options:
            body["reasoning"] = options
        body["include"] = [ENCRYPTED_REASONING]
    body["store"] = False
    body["stream"] = True
    if cache_key:
        body["prompt_cache_key"] = cache_key[:64]  # OpenAI takes no longer key
    if max_tokens:
        body["max_output_tokens"] = max(max_tokens, 16)  # the API refuses fewer (litellm raises it too)
    return body


def function_tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    """A Chat Completions function tool (`{"type": "function", "function": {...}}`) in the Responses shape."""
    function = tool.get("function")
    if tool.get("type") != "function" or not isinstance(function, Mapping):
        return dict(tool)  # already in the Responses shape (or a tool type of its own): as it is
    converted: dict[str, Any] = {"type": "function", "name": function.get("name")}
    if function.get("description") is not None:
        converted["description"] = function["description"]
    converted["parameters"] = function.get("parameters") or {"type": "object", "properties": {}}
    converted["strict"] = bool(function.get("strict", False))
    return converted


def input_items(messages: Sequence[Mapping[str, Any]]) -> tuple[str | None, list[dict[str, Any]]]:
    """(instructions, input items): the leading system messages joined, then every message as items."""
    lead = 0
    texts: list[str] = []
    while lead < len(messages) and messages[lead].get("role") == "system":
        content = messages[lead].get("content")
        if not isinstance(content, str):
            break
        texts.append(content)
        lead += 1
    items: list[dict[str, Any]] = []
    for message in messages[lead:]:
        items.extend(_items(message))
    return (" ".join(texts) if texts else None), items


def _items(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    role = message.get("role")
    content = message.get("content")
    if role == "tool":
        output = [{"type": "input_text", "text": content}] if isinstance(content, str) else _parts(content, "user")
        return [{"type": "function_call_output", "call_id": message.get("tool_call_id"), "output": output}]
    if role != "assistant":
        return [{"type": "message", "role": role, "content": _parts(content, str(role))}]
    items = [reasoning_input(item) for item in message.get("reasoning_items") or () if _sendable(item)]
    if not content and not message.get("tool_calls"):
        # A reply that said nothing (cut off while thinking): an empty answer, as litellm sends it, which is also
        # what its reasoning led to (OpenAI refuses a reasoning item without its following item).
        content = ""
        items.append({"type": "message", "role": "assistant", "content": _parts(content, "assistant")})
    elif content:
        items.append({"type": "message", "role": "assistant", "content": _parts(content, "assistant")})
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        items.append(
            {
                "type": "function_call",
                "call_id": call.get("id"),
                "name": function.get("name"),
                "arguments": function.get("arguments"),
            }
        )
    return items


def _sendable(item: Any) -> bool:
    """Only a reasoning item that carries its encrypted content can go back: with `store: false`, OpenAI knows no
    other (it answers 404 for one named by id alone)."""
    return isinstance(item, Mapping) and item.get("type") == "reasoning" and bool(item.get("encrypted_content"))


def reasoning_input(item: Mapping[str, Any]) -> dict[str, Any]:
    """A reasoning output item as it goes back: its id, summary and encrypted content, nothing else."""
    sent: dict[str, Any] = {"type": "reasoning"}
    if item.get("id"):
        sent["id"] = item["id"]
    sent["summary"] = list(item.get("summary") or [])
    sent["encrypted_content"] = item["encrypted_content"]
    return sent


def _parts(content: Any, role: str) -> list[dict[str, Any]]:
    """Message content as Responses content parts: `input_text` (`output_text` for the assistant), images as
    `input_image` with the data URL."""
    kind = "output_text" if role == "assistant" else "input_text"
    if content is None:
        return [{"type": kind, "text": ""}]
    if isinstance(content, str):
        return [{"type": kind, "text": content}]
    parts: list[dict[str, Any]] = []
    for part in content:
        if not isinstance(part, Mapping):
            parts.append({"type": kind, "text": str(part)})
        elif part.get("type") == "text":
            parts.append({"type": kind, "text": part.get("text", "")})
        elif part.get("type") == "image_url":
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, Mapping) else image
            detail = image.get("detail") if isinstance(image, Mapping) else None
            parts.append({"type": "input_image", "image_url": url, "detail": detail or "auto"})
        else:
            parts.append(dict(part))
    return parts
