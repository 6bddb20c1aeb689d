"""What the scripted Responses API endpoint checks and remembers across requests, as OpenAI does.

- The input is checked as OpenAI checks it, so a client that sends its history back wrong fails as it would
  against OpenAI: a reasoning item must carry the `encrypted_content` this server minted for it (or, for a
  request that stores its responses, name an item the server kept), and come with what it led to (an assistant
  message or a function call after it); a reasoning item sent with `store: false` and no encrypted content is not
  found; a tool call's output needs its call, and a call its output.
- The prompt cache: OpenAI caches a prompt's prefix automatically and bills the part of a new prompt that an
  earlier one began with as cached tokens (from 1024 tokens on, in steps of 128). Here the prefix is the request
  as OpenAI reads it (tools, instructions, then the input items) in its JSON bytes, 4 characters a token, so a
  client that reorders tools or rewrites an earlier item loses the match as it would against OpenAI.
- Every request's matched prefix is kept (`cached`), so tests and benches can measure how often it matched.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from coder_agent.scripted import wire
from coder_agent.scripted.wire import error_json

# OpenAI's rule, the one `wire` applies to Chat Completions too: from 1024 tokens on, in steps of 128
CACHE_MINIMUM = wire.OPENAI_CACHE_MIN_TOKENS
CACHE_STEP = wire.OPENAI_CACHE_STEP
CONTEXT_WORDS = "Your input exceeds the context window of this model. Please adjust your input and try again."


@dataclass
class Refusal:
    """An error answer instead of a reply: the status and OpenAI's error body."""

    status: int
    body: dict[str, Any]


def _error(status: int, message: str, *, param: str | None = None, code: str | None = None) -> Refusal:
    body = error_json(message, status)
    body["error"] |= {"param": param, "code": code}
    return Refusal(status, body)


def prompt_prefix(body: dict[str, Any]) -> str:
    """The request as the prompt cache reads it: tools, instructions, then each input item, as JSON."""
    parts = [json.dumps(body.get("tools") or []), json.dumps(body.get("instructions"))]
    items = body.get("input")
    parts += [json.dumps(item) for item in items] if isinstance(items, list) else [json.dumps(items)]
    return "".join(parts)


def _followed(items: list[Any], number: int) -> bool:
    """Whether the reasoning item at `number` is followed by what it led to: after any other reasoning items, an
    assistant message or a function call."""
    for item in items[number + 1 :]:
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "reasoning":
            continue
        return kind == "function_call" or (kind == "message" and item.get("role") == "assistant")
    return False


@dataclass
class ResponsesState:
    """Shared by every request to one scripted server (its handler threads take the lock)."""

    _lock: threading.Lock = field(default_factory=threading.Lock)
    _minted: dict[str, str] = field(default_factory=dict)  # encrypted content -> the reasoning item's id
    _stored: set[str] = field(default_factory=set)  # reasoning item ids of responses stored (`store` not false)
    _prefixes: dict[str, list[str]] = field(default_factory=dict)  # model -> the prompts seen
    cached: list[int] = field(default_factory=list)  # each admitted request's cached tokens, in order

    def made(self, item_id: str, *, encrypted: bool, store: bool) -> str | None:
        """A reasoning item the server sent: its encrypted content when the request asked for it (remembered, so
        it can be verified when sent back); kept by id when the request stores its responses."""
        content = f"enc_{item_id.partition('_')[2]}" if encrypted else None
        with self._lock:
            if content is not None:
                self._minted[content] = item_id
            if store:
                self._stored.add(item_id)
        return content

    def reasoning_for(self, body: dict[str, Any]) -> Callable[[str], str | None]:
        """`made` for the reasoning items of a reply to this request."""
        include = body.get("include")
        encrypted = isinstance(include, list) and "reasoning.encrypted_content" in include
        store = body.get("store") is not False
        return lambda item_id: self.made(item_id, encrypted=encrypted, store=store)

    def admit(self, body: dict[str, Any], context_limit: int | None, tokens: int) -> tuple[Refusal | None, int, int]:
        """(the error OpenAI would answer, or None; the prompt's cached tokens; the request's number among those
        admitted). An admitted prompt is cached."""
        refusal = self._check(body)
        if refusal is None and context_limit is not None and tokens > context_limit:
            refusal = _error(400, CONTEXT_WORDS, param="input", code="context_length_exceeded")
        if refusal is not None:
            return refusal, 0, -1
        prefix = prompt_prefix(body)
        model = str(body.get("model"))
        with self._lock:
            seen = self._prefixes.setdefault(model, [])
            cached = wire.cached_tokens(prefix, seen)
            seen.append(prefix)
            self.cached.append(cached)
            number = len(self.cached) - 1
        return None, cached, number

    def _check(self, body: dict[str, Any]) -> Refusal | None:
        if not isinstance(body.get("model"), str):
            return _error(400, "Missing required parameter: 'model'.", param="model", code="missing_required_parameter")
        items = body.get("input")
        if isinstance(items, str):
            return None
        if not isinstance(items, list):
            return _error(400, "Invalid type for 'input': expected a string or an array.", param="input")
        calls: set[str] = set()
        outputs: set[str] = set()
        for number, item in enumerate(items):
            if not isinstance(item, dict):
                return _error(400, f"Invalid type for 'input[{number}]': expected an object.", param="input")
            kind = item.get("type")
            if kind == "reasoning":
                refusal = self._check_reasoning(item, body.get("store") is not False)
                if refusal is None and not _followed(items, number):
                    words = (
                        f"Item '{item.get('id')}' of type 'reasoning' was provided without its required following item."
                    )
                    refusal = _error(400, words, param="input")
                if refusal is not None:
                    return refusal
            elif kind == "function_call":
                calls.add(str(item.get("call_id")))
            elif kind == "function_call_output":
                call_id = str(item.get("call_id"))
                if call_id not in calls:
                    return _error(400, f"No tool call found for function call output with call_id {call_id}.")
                outputs.add(call_id)
        unanswered = sorted(calls - outputs)
        if unanswered:
            return _error(400, f"No tool output found for function call {unanswered[0]}.", param="input")
        return None

    def _check_reasoning(self, item: dict[str, Any], store: bool) -> Refusal | None:
        item_id = item.get("id")
        content = item.get("encrypted_content")
        with self._lock:
            if content is not None:
                minted = self._minted.get(content) if isinstance(content, str) else None
                if minted is None or (item_id is not None and item_id != minted):
                    words = f"The encrypted content for item {item_id} could not be verified."
                    return _error(400, words, code="invalid_encrypted_content")
                return None
            if not store:
                return _error(
                    404,
                    f"Item with id '{item_id}' not found. Items are not persisted when `store` is set to false. "
                    "Try again with `store` set to true, or remove this item from your input.",
                    param="input",
                )
            if item_id not in self._stored:
                return _error(404, f"Item with id '{item_id}' not found.", param="input")
        return None
