"""Scripted model replies: what the fake OpenAI-compatible server sends, step by step.

A `Reply` is a list of steps played in order for one chat-completion request; a `Script` is the
queue of replies for a whole test, evaluation or benchmark. Both are pydantic models, so a golden
script can live in a .json file (`Script.load(path)` / `script.save(path)`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer, model_validator

DEFAULT_PROMPT_TOKENS = 10


class _Step(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TextStep(_Step):
    """Content pieces; each one is a separate `delta.content` chunk."""

    type: Literal["text"] = "text"
    pieces: list[str]


class ReasoningStep(_Step):
    """Thinking pieces; each one is a separate `delta.reasoning_content` chunk (`delta.reasoning` with
    `field="reasoning"`, as vLLM and OpenRouter send it).

    On the Anthropic wire they form one thinking block (`thinking_delta`s) closed by a `signature_delta`
    carrying `signature`; the OpenAI wire has no signatures.
    """

    type: Literal["reasoning"] = "reasoning"
    pieces: list[str]
    signature: str = "scripted-signature"
    field: Literal["reasoning_content", "reasoning"] = "reasoning_content"


class ToolCallStep(_Step):
    """One tool call whose JSON `arguments` are split into `pieces` chunks.

    The tool calls of a reply get indexes 0, 1, ... in order. As with OpenAI, `id` and `name`
    travel only on the first delta of each index; `id` defaults to `call_<index>`.
    """

    type: Literal["tool_call"] = "tool_call"
    name: str
    arguments: str = "{}"
    id: str | None = None
    pieces: int = Field(default=1, ge=1)
    # Chat Completions: what the provider attaches to the call (`extra_content`, as Gemini's thought signature)
    extra: dict[str, Any] | None = None

    @model_serializer(mode="wrap")
    def _saved(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Without `extra` when it has none: scripts saved before it existed stay as they are."""
        data: dict[str, Any] = handler(self)
        if data.get("extra") is None:
            data.pop("extra", None)
        return data

    def argument_pieces(self) -> list[str]:
        """`arguments` cut into `pieces` slices of near-equal length (fewer if it is shorter)."""
        text, n = self.arguments, min(self.pieces, max(len(self.arguments), 1))
        bounds = [round(i * len(text) / n) for i in range(n + 1)]
        return [text[bounds[i] : bounds[i + 1]] for i in range(n)]


class SleepStep(_Step):
    """Stall for `seconds`; before any chunk, the response headers are held back too."""

    type: Literal["sleep"] = "sleep"
    seconds: float = Field(ge=0)


class FinishStep(_Step):
    type: Literal["finish"] = "finish"
    finish_reason: Literal["stop", "length", "tool_calls", "content_filter"] = "stop"


class UsageStep(_Step):
    """Token counts, sent as a usage-only chunk when the client asked for `include_usage`.

    `prompt_tokens` counts every prompt token, cached or not; of those, `cache_read_tokens` were read
    from the provider's prompt cache and `cache_creation_tokens` written to it. The OpenAI wire sends
    the cache reads as `prompt_tokens_details.cached_tokens`; the Anthropic wire sends the three parts
    (`input_tokens` is the uncached rest) in `message_start` and the output tokens in `message_delta`.
    Of the completion tokens, `reasoning_tokens` were spent thinking (the Responses API reports them).
    """

    type: Literal["usage"] = "usage"
    prompt_tokens: int = Field(default=DEFAULT_PROMPT_TOKENS, ge=0)
    completion_tokens: int = Field(default=0, ge=0)
    cache_read_tokens: int = Field(default=0, ge=0)
    cache_creation_tokens: int = Field(default=0, ge=0)
    reasoning_tokens: int = Field(default=0, ge=0)

    @model_serializer(mode="wrap")
    def _without_unset_reasoning(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # Written only when there are any: the scripts saved before the field (evals' golden files) stay as they are.
        data: dict[str, Any] = handler(self)
        if not self.reasoning_tokens:
            data.pop("reasoning_tokens", None)
        return data

    @model_validator(mode="after")
    def _cache_within_prompt(self) -> UsageStep:
        if self.cache_read_tokens + self.cache_creation_tokens > self.prompt_tokens:
            raise ValueError("cache_read_tokens + cache_creation_tokens cannot exceed prompt_tokens")
        if self.reasoning_tokens > self.completion_tokens:
            raise ValueError("reasoning_tokens cannot exceed completion_tokens")
        return self


class CutStep(_Step):
    """Drop the TCP connection here: no terminating chunk, no `[DONE]`."""

    type: Literal["cut"] = "cut"


class EndStep(_Step):
    """End the response body cleanly here: no finish chunk, no `[DONE]`.

    What a proxy or load balancer sends when its connection to the model dies mid-reply: to the
    client the HTTP exchange looks complete, only the stream's own end markers are missing.
    """

    type: Literal["end"] = "end"


class StreamErrorStep(_Step):
    """An error event inside the stream, then the end of the body.

    OpenAI-compatible servers (vLLM, sglang) send `data: {"error": {...}}`; Anthropic sends
    `event: error` with `{"type": "error", "error": {"type": ..., "message": ...}}` (e.g. overloaded).
    """

    type: Literal["stream_error"] = "stream_error"
    message: str
    error_type: str = "overloaded_error"


class EmptyBodyStep(_Step):
    """Answer `200 OK` with an empty body (no SSE events at all). Must be the only step."""

    type: Literal["empty_body"] = "empty_body"


class HttpErrorStep(_Step):
    """Answer with an HTTP error instead of a completion. Must be the first step.

    `error_type` is the body's `error.type`; by default one that fits the status (see `wire.py`). With
    `echo_key`, `{key}` in `message` becomes the key the request carried (the bearer token of its
    `Authorization`, else its `x-api-key`), as the error bodies of some servers and proxies quote it.
    """

    type: Literal["http_error"] = "http_error"
    status: int = Field(ge=400, le=599)
    message: str
    retry_after: float | None = Field(default=None, ge=0)
    error_type: str | None = None
    echo_key: bool = False

    def message_for(self, headers: Mapping[str, str]) -> str:
        """The body's message for a request with these headers (names lower-cased)."""
        if not self.echo_key:
            return self.message
        bearer = headers.get("authorization", "")
        key = bearer.split(" ", 1)[1] if bearer.lower().startswith("bearer ") else headers.get("x-api-key", "")
        return self.message.replace("{key}", key)


Step = Annotated[
    TextStep
    | ReasoningStep
    | ToolCallStep
    | SleepStep
    | FinishStep
    | UsageStep
    | CutStep
    | EndStep
    | StreamErrorStep
    | EmptyBodyStep
    | HttpErrorStep,
    Field(discriminator="type"),
]


def tool_call(name: str, arguments: Mapping[str, Any] | str, *, id: str | None = None, pieces: int = 3) -> ToolCallStep:
    """A tool call step; a mapping of arguments is serialised to JSON."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return ToolCallStep(name=name, arguments=args, id=id, pieces=pieces)


def _usage(completion_tokens: int) -> UsageStep:
    return UsageStep(prompt_tokens=DEFAULT_PROMPT_TOKENS, completion_tokens=completion_tokens)


class Reply(BaseModel):
    """The steps played, in order, for one chat-completion request."""

    model_config = ConfigDict(extra="forbid")

    steps: list[Step] = Field(default_factory=list)

    @model_validator(mode="after")
    def _http_error_comes_first(self) -> Reply:
        if any(isinstance(step, HttpErrorStep) for step in self.steps[1:]):
            raise ValueError("an http_error step must be the first step of a reply")
        if any(isinstance(step, EmptyBodyStep) for step in self.steps) and len(self.steps) > 1:
            raise ValueError("an empty_body step must be the only step of a reply")
        return self

    @property
    def http_error(self) -> HttpErrorStep | None:
        first = self.steps[0] if self.steps else None
        return first if isinstance(first, HttpErrorStep) else None

    @classmethod
    def text(cls, *pieces: str) -> Reply:
        """Text pieces, then finish `stop` and usage."""
        return cls(steps=[TextStep(pieces=list(pieces)), FinishStep(), _usage(len(pieces))])

    @classmethod
    def thinking_then_text(cls, thinking: Sequence[str], text: Sequence[str]) -> Reply:
        thinking, text = _pieces(thinking), _pieces(text)
        steps: list[Step] = [ReasoningStep(pieces=thinking), TextStep(pieces=text)]
        return cls(steps=[*steps, FinishStep(), _usage(len(thinking) + len(text))])

    @classmethod
    def tool_calls(cls, calls: Sequence[ToolCallStep], text: Sequence[str] | None = None) -> Reply:
        """Optional leading text, then the calls (index 0, 1, ...), finish `tool_calls` and usage."""
        steps: list[Step] = [TextStep(pieces=_pieces(text))] if text else []
        steps.extend(calls)
        tokens = len(_pieces(text or [])) + sum(len(call.argument_pieces()) for call in calls)
        return cls(steps=[*steps, FinishStep(finish_reason="tool_calls"), _usage(tokens)])

    @classmethod
    def error(cls, status: int, message: str, retry_after: float | None = None, echo_key: bool = False) -> Reply:
        """An HTTP error; with `echo_key`, `{key}` in `message` is the request's key (see `HttpErrorStep`)."""
        step = HttpErrorStep(status=status, message=message, retry_after=retry_after, echo_key=echo_key)
        return cls(steps=[step])

    @classmethod
    def stall(cls, seconds: float, after_text: Sequence[str] = (), then_text: Sequence[str] = ()) -> Reply:
        """Send `after_text`, stall, then send `then_text` and finish normally.

        With no `after_text` the stall comes before the response headers.
        """
        before, after = _pieces(after_text), _pieces(then_text)
        steps: list[Step] = [TextStep(pieces=before)] if before else []
        steps.append(SleepStep(seconds=seconds))
        if after:
            steps.append(TextStep(pieces=after))
        return cls(steps=[*steps, FinishStep(), _usage(len(before) + len(after))])

    @classmethod
    def cut_after(cls, *pieces: str) -> Reply:
        """Text pieces, then the connection drops mid-stream."""
        return cls(steps=[TextStep(pieces=list(pieces)), CutStep()])

    @classmethod
    def ended_after(cls, *pieces: str) -> Reply:
        """Text pieces, then the body ends cleanly without a finish reason or `[DONE]`."""
        return cls(steps=[TextStep(pieces=list(pieces)), EndStep()])

    @classmethod
    def empty_stream(cls) -> Reply:
        """An event stream with no chunks: the body ends without a finish reason or `[DONE]`."""
        return cls(steps=[EndStep()])

    @classmethod
    def empty_body(cls) -> Reply:
        """`200 OK` with nothing in the body."""
        return cls(steps=[EmptyBodyStep()])

    @classmethod
    def many_chunks(cls, n: int) -> Reply:
        """`n` text chunks with distinct contents (litellm rejects 100 identical chunks in a row)."""
        return cls.text(*(f"t{i} " for i in range(n)))


def _pieces(pieces: Sequence[str] | None) -> list[str]:
    if pieces is None:
        return []
    return [pieces] if isinstance(pieces, str) else list(pieces)


class Script(BaseModel):
    """Replies served in order; `default` answers every request once they run out."""

    model_config = ConfigDict(extra="forbid")

    replies: list[Reply] = Field(default_factory=list)
    default: Reply | None = None

    @classmethod
    def load(cls, path: str | Path) -> Script:
        return cls.model_validate_json(Path(path).read_text(encoding="utf-8"))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.model_dump_json(indent=2) + "\n", encoding="utf-8")
