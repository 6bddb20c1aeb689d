"""The model's context window: how big it is, how much of it a conversation takes, and when to compact.

Providers count the tokens of each request and say so in its usage; that count is the truth. What was added
since the last count (a user message, tool results) is estimated at four characters a token, as is a whole
conversation that has no count yet (a session just loaded).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ...llm import catalog
from ...llm.messages import AssistantMessage, ChatMessage, SystemMessage, TextPart, ToolMessage, UserMessage

# Used when litellm does not know the model (a local or custom one): the window most current models have.
FALLBACK_CONTEXT_WINDOW = 128_000
CHARS_PER_TOKEN = 4
IMAGE_TOKENS = 1_000  # what providers charge for a typical screenshot, give or take
MESSAGE_TOKENS = 4  # the role and framing of each message
MAX_TOOL_OUTPUT_CHARS = 60_000  # no tool result is longer, whatever the window
TOOL_OUTPUT_SHARE = 0.1  # nor takes more than this share of the window
MIN_TOOL_OUTPUT_CHARS = 800


def text_tokens(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def message_tokens(message: ChatMessage) -> int:
    if isinstance(message, SystemMessage):
        return MESSAGE_TOKENS + text_tokens(message.text)
    if isinstance(message, UserMessage):
        parts = (text_tokens(p.text) if isinstance(p, TextPart) else IMAGE_TOKENS for p in message.parts)
        return MESSAGE_TOKENS + sum(parts)
    if isinstance(message, ToolMessage):
        return MESSAGE_TOKENS + text_tokens(message.content)
    assert isinstance(message, AssistantMessage)
    calls = sum(text_tokens(call.name) + text_tokens(call.arguments) + MESSAGE_TOKENS for call in message.tool_calls)
    return MESSAGE_TOKENS + text_tokens(message.text) + text_tokens(message.reasoning or "") + calls


def estimate_tokens(messages: Iterable[ChatMessage]) -> int:
    return sum(message_tokens(message) for message in messages)


def tools_tokens(specs: Sequence[dict[str, Any]]) -> int:
    return text_tokens(json.dumps(specs)) if specs else 0


def window_of(model: str, override: int | None = None) -> int:
    """The model's context window in tokens: the setting, else litellm's figure, else the fallback."""
    return override or catalog.context_window(model) or FALLBACK_CONTEXT_WINDOW


@dataclass(frozen=True)
class ContextPolicy:
    """How big the window is and how full it may get before the older turns are summarised."""

    window: int = FALLBACK_CONTEXT_WINDOW
    compact_at: float = 0.8  # the share of the window in use that starts a compaction
    keep_share: float = 0.25  # the recent turns kept verbatim take at most this share of the window

    @property
    def threshold(self) -> int:
        return int(self.window * self.compact_at)

    @property
    def keep_tokens(self) -> int:
        return int(self.window * min(self.keep_share, self.compact_at / 2))

    @property
    def tool_output_chars(self) -> int:
        """The longest tool result the model is given: a share of the window, never more than 60,000 characters."""
        share = int(self.window * TOOL_OUTPUT_SHARE * CHARS_PER_TOKEN)
        return max(MIN_TOOL_OUTPUT_CHARS, min(MAX_TOOL_OUTPUT_CHARS, share))

    @property
    def summary_input_tokens(self) -> int:
        """How much conversation one summary request may carry (the rest of the window: prompt and summary)."""
        return max(500, int(self.window * 0.6))
