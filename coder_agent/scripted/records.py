"""What the scripted model server records of a request, and the errors it answers by itself. Standard library only."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

EXHAUSTED_MESSAGE = "scripted model: no reply left in the script"


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: dict[str, Any]


def estimated_tokens(body: dict[str, Any]) -> int:
    """A request's size in tokens, roughly as providers count (4 characters a token): messages or input, system or
    instructions, tools."""
    parts = (body.get("messages"), body.get("system"), body.get("tools"), body.get("input"), body.get("instructions"))
    return sum(len(json.dumps(part, ensure_ascii=False)) for part in parts if part) // 4


def context_error(limit: int, tokens: int) -> str:
    """What OpenAI answers (400) to a request over the model's context window; litellm recognises the words."""
    return (
        f"This model's maximum context length is {limit} tokens. However, your messages resulted in {tokens} "
        "tokens. Please reduce the length of the messages."
    )
