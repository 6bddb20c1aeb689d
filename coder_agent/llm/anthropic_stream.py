"""Anthropic Messages stream events -> Chat Completions deltas, as litellm turns them into (the contract suite
compares the two).

Fed to the same `StreamAccumulator` as every other stream, these give the same events and the same
final message as litellm's path: thinking as `reasoning_content` plus `thinking_blocks` (the signature
arrives as its own block and merges into the one before), text as `content`, each `tool_use` as a tool
call (its own index, counted from 0) whose arguments are the `input_json_delta`s, the stop reason
mapped to an OpenAI finish reason, usage as prompt tokens (uncached + cache reads + cache writes, the reads and
writes also on their own) and output tokens.
"""

from __future__ import annotations

from typing import Any

from .errors import ProviderStreamError

FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
    "compaction": "length",
}


class AnthropicDeltas:
    def __init__(self) -> None:
        self._tool_index = -1
        self._block_type: str | None = None
        self._block_deltas: list[dict[str, Any]] = []
        self._usage: dict[str, Any] = {}

    def chunk(self, payload: dict[str, Any]) -> dict[str, Any] | None:
        """The delta chunk for one event, or None when it carries nothing."""
        kind = payload.get("type")
        if kind == "content_block_delta":
            return self._delta(payload.get("delta") or {})
        if kind == "content_block_start":
            return self._start(payload.get("content_block") or {})
        if kind == "content_block_stop":
            return self._stop()
        if kind == "message_delta":
            usage = payload.get("usage")
            chunk: dict[str, Any] = {
                "choices": [{"delta": {}, "finish_reason": _finish_reason(payload.get("delta") or {})}]
            }
            if isinstance(usage, dict):
                chunk["usage"] = self._add_usage(usage)
            return chunk
        if kind == "message_start":
            usage = (payload.get("message") or {}).get("usage")
            return {"usage": self._add_usage(usage)} if isinstance(usage, dict) else None
        if kind == "error":
            error = payload.get("error") or {}
            raise ProviderStreamError(str(error.get("message") or payload))
        return None  # ping, message_stop and events we do not know

    def _start(self, block: dict[str, Any]) -> dict[str, Any] | None:
        self._block_deltas = []
        kind = self._block_type = block.get("type")
        if kind == "text":
            text = block.get("text") or ""
            return _delta_chunk({"content": text}) if text else None
        if kind == "tool_use":
            self._tool_index += 1
            call = {
                "id": block.get("id"),
                "type": "function",
                "function": {"name": block.get("name"), "arguments": ""},
                "index": self._tool_index,
            }
            return _delta_chunk({"tool_calls": [call]})
        if kind == "redacted_thinking":
            return _delta_chunk({"thinking_blocks": [{"type": "redacted_thinking", "data": block.get("data")}]})
        return None

    def _delta(self, delta: dict[str, Any]) -> dict[str, Any] | None:
        if "text" in delta:
            text = delta["text"]
            return _delta_chunk({"content": text}) if text else None
        self._block_deltas.append(delta)
        if "partial_json" in delta:
            if self._block_type != "tool_use":
                return None
            call = {"function": {"arguments": delta["partial_json"]}, "type": "function", "index": self._tool_index}
            return _delta_chunk({"tool_calls": [call]})
        if "thinking" in delta or "signature" in delta:
            thinking = delta.get("thinking")
            if isinstance(thinking, str) and thinking:
                block = {"type": "thinking", "thinking": thinking}
                return _delta_chunk({"reasoning_content": thinking, "thinking_blocks": [block]})
            signature = delta.get("signature")
            if signature:
                block = {"type": "thinking", "thinking": "", "signature": signature}
                return _delta_chunk({"thinking_blocks": [block]})
        return None

    def _stop(self) -> dict[str, Any] | None:
        kind, self._block_type = self._block_type, None
        deltas, self._block_deltas = self._block_deltas, []
        # litellm sends "{}" for a tool call whose argument deltas were all empty (but not when it had none).
        if kind != "tool_use" or not deltas or deltas[0].get("type") in ("text_delta", "thinking_delta"):
            return None
        if "".join(d.get("partial_json", "") for d in deltas if d.get("type") == "input_json_delta"):
            return None
        call = {"function": {"arguments": "{}"}, "type": "function", "index": self._tool_index}
        return _delta_chunk({"tool_calls": [call]})

    def _add_usage(self, usage: dict[str, Any]) -> dict[str, Any]:
        self._usage.update(usage)
        u = self._usage
        written, read = int(u.get("cache_creation_input_tokens") or 0), int(u.get("cache_read_input_tokens") or 0)
        return {
            "prompt_tokens": int(u.get("input_tokens") or 0) + written + read,
            "completion_tokens": int(u.get("output_tokens") or 0),
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": written,
        }


def _delta_chunk(delta: dict[str, Any]) -> dict[str, Any]:
    return {"choices": [{"delta": delta}]}


def _finish_reason(delta: dict[str, Any]) -> str:
    reason = delta.get("stop_reason") or "stop"
    return FINISH_REASONS.get(reason, "stop")
