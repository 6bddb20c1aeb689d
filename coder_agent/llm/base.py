"""The `Model` seam: what the turn loop needs from a language model, as a stream of typed events."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .messages import AssistantMessage, ChatMessage

FinishReason = str  # "stop", "length", "tool_calls", "content_filter", or whatever a provider says


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str
    shown: str | None = None  # the messageId it was already shown under (by the early first call), if it was


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallBegin:
    """The model started writing a tool call; its arguments follow and arrive whole in `Completion`."""

    index: int
    id: str
    name: str


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int  # all of them, those read from the provider's prompt cache included
    completion_tokens: int
    cost_usd: float | None = None
    cache_read_tokens: int = 0  # of the prompt tokens, those read from the cache (priced at their own rate)


@dataclass(frozen=True, slots=True)
class Completion:
    """The last event of a stream: the whole assistant message and why it stopped."""

    message: AssistantMessage
    finish_reason: FinishReason
    usage: Usage | None


ModelEvent = TextDelta | ReasoningDelta | ToolCallBegin | Completion


class ModelError(Exception):
    """A provider failure, with a message fit to show the user."""

    def __init__(
        self, message: str, *, retryable: bool = False, status: int | None = None, context_window: bool = False
    ) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.status = status
        self.context_window = context_window  # the request did not fit the model's context window


class Model(Protocol):
    """Streams one completion. Errors are raised as `ModelError`; the last event is a `Completion`."""

    name: str

    def stream(
        self, messages: Sequence[ChatMessage], tools: Sequence[dict[str, Any]] = ()
    ) -> AsyncGenerator[ModelEvent, None]: ...
