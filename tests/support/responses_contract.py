"""One scripted scenario through the Responses API adapter (`ResponsesModel`) and through litellm's Responses bridge
(`openai/responses/<model>`, asked for what the adapter asks: `store: false`, the encrypted reasoning, the
session's cache key), and what came out of each: the events, the final message with its reasoning items, the
usage with the cached tokens and the cost, the error, and every request the scripted server got."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Literal

import anyio

from coder_agent.llm.accumulate import StreamAccumulator
from coder_agent.llm.base import Completion, ModelError, ModelEvent, ReasoningDelta, TextDelta, Usage
from coder_agent.llm.errors import classify_error
from coder_agent.llm.factory import make_model
from coder_agent.llm.loader import load_litellm
from coder_agent.llm.messages import ChatMessage, TextPart, UserMessage
from coder_agent.llm.responses_model import ResponsesModel, provider_form
from coder_agent.llm.retry import with_retries
from coder_agent.llm.wire.config import ModelConfig
from coder_agent.llm.wire.responses_request import ENCRYPTED_REASONING
from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer

Path = Literal["adapter", "litellm"]
MODEL = "openai/gpt-5-mini"
SESSION = "sess_contract"
HELLO: list[ChatMessage] = [UserMessage(parts=[TextPart(text="hi")])]
# The headers that carry what the provider acts on (the SDKs add their own user agents and such).
_HEADERS = ("authorization", "content-type")


@dataclass
class Outcome:
    events: list[Any] = field(default_factory=list)
    error: tuple[str, bool, int | None] | None = None
    context_window: bool | None = None
    bodies: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    last: Completion | None = None  # the completion itself (its message goes into the next turn)

    @property
    def requests(self) -> int:
        return len(self.bodies)

    @property
    def completion(self) -> tuple[Any, ...]:
        """("completion", message dict, finish reason, (prompt, completion, cached tokens, cost) or None)."""
        last = self.events[-1]
        assert isinstance(last, tuple) and last[0] == "completion", self.events
        return last

    def texts(self, kind: type[TextDelta] | type[ReasoningDelta] = TextDelta) -> list[str]:
        return [e.text for e in self.events if isinstance(e, kind)]


def config_for(srv: ScriptedModelServer | None, model: str = MODEL, **overrides: Any) -> ModelConfig:
    config = ModelConfig(
        model=model,
        api_base=srv.url if srv is not None else None,
        api_key="sk-test",
        timeout=5.0,
        max_retries=2,
        retry_base_delay=0.01,
    )
    return config.replace(**overrides)


class LiteLLMResponses:
    """The oracle: litellm's Responses bridge, driven as `LiteLLMModel` drives litellm (retries ours, none of
    litellm's), its chunks read by the accumulator of litellm's path, and what that accumulator does not keep
    (the reasoning items, the cached tokens) read from the chunks beside it."""

    def __init__(self, config: ModelConfig) -> None:
        self.config = config
        self.name = config.model

    async def stream(
        self, messages: Sequence[ChatMessage], tools: Sequence[dict[str, Any]] = ()
    ) -> AsyncGenerator[ModelEvent, None]:
        litellm = await load_litellm()

        def classify(exc: BaseException) -> ModelError:
            return classify_error(exc, self.config.model, self.config.api_base)

        attempts = with_retries(lambda: self._once(litellm, messages, tools), classify, self.config.retry_policy)
        async with aclosing(attempts) as events:
            async for event in events:
                yield event

    def _request(self, messages: Sequence[ChatMessage], tools: Sequence[dict[str, Any]]) -> dict[str, Any]:
        config = self.config
        request: dict[str, Any] = {
            "model": "openai/responses/" + config.model.split("/", 1)[1],
            "messages": [provider_form(message) for message in messages],
            "stream": True,
            "stream_options": {"include_usage": True},
            "timeout": config.timeout,
            "num_retries": 0,
            "max_retries": 0,
            "_skip_mcp_handler": True,
            "store": False,
            "include": [ENCRYPTED_REASONING],
        }
        request["prompt_cache_key"] = SESSION  # the adapter's: the session's id (`make_model`'s cache key)
        for name in ("api_base", "api_key", "max_tokens", "reasoning_effort"):
            if getattr(config, name):
                request[name] = getattr(config, name)
        if tools:
            request["tools"] = list(tools)
        return request

    async def _once(
        self, litellm: ModuleType, messages: Sequence[ChatMessage], tools: Sequence[dict[str, Any]]
    ) -> AsyncGenerator[ModelEvent, None]:
        response = await litellm.acompletion(**self._request(messages, tools))
        acc = StreamAccumulator()
        reasoning_items: list[dict[str, Any]] = []
        usage_object: Any = None
        try:
            async for chunk in response:
                choices = chunk.choices or []
                delta = choices[0].delta if choices else None
                reasoning_items += [dict(item) for item in getattr(delta, "reasoning_items", None) or []]
                if getattr(chunk, "usage", None) is not None:
                    usage_object = chunk.usage
                for event in acc.add(chunk):
                    yield event
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(2):
                await response.aclose()
        acc.check_complete(getattr(response, "received_finish_reason", None) is not None)
        message, finish_reason, counts = acc.finish()
        message = message.model_copy(update={"reasoning_items": reasoning_items or None})
        usage = None
        if counts is not None:
            details = getattr(usage_object, "prompt_tokens_details", None)
            cached = int(getattr(details, "cached_tokens", 0) or 0)
            try:
                cost = sum(litellm.cost_per_token(model=self.config.model, usage_object=usage_object))
            except Exception:  # an unknown model: no price
                cost = None
            usage = Usage(counts.prompt_tokens, counts.completion_tokens, cost, cached)
        yield Completion(message=message, finish_reason=finish_reason, usage=usage)


def _normal(event: ModelEvent) -> Any:
    if isinstance(event, Completion):
        usage = event.usage
        counts = None
        if usage is not None:
            cost = None if usage.cost_usd is None else round(usage.cost_usd, 12)
            counts = (usage.prompt_tokens, usage.completion_tokens, usage.cache_read_tokens, cost)
        return ("completion", event.message.model_dump(), event.finish_reason, counts)
    return event


async def model_for(path: Path, config: ModelConfig) -> ResponsesModel | LiteLLMResponses:
    if path == "litellm":
        with anyio.fail_after(180):  # its import, once per process: seconds, and more on a loaded machine
            await load_litellm()
        return LiteLLMResponses(config)
    model = make_model(config, SESSION)
    assert isinstance(model, ResponsesModel), f"{config.model} does not take the Responses wire"
    return model


async def stream_into(
    outcome: Outcome,
    model: ResponsesModel | LiteLLMResponses,
    messages: Sequence[ChatMessage],
    tools: Sequence[dict[str, Any]],
) -> None:
    try:
        with anyio.fail_after(30):
            async with aclosing(model.stream(messages, tools)) as events:
                async for event in events:
                    if isinstance(event, Completion):
                        outcome.last = event
                    outcome.events.append(_normal(event))
    except ModelError as exc:
        outcome.error = (exc.message, exc.retryable, exc.status)
        outcome.context_window = exc.context_window


async def run(
    path: Path,
    replies: Sequence[Reply],
    messages: Sequence[ChatMessage] = HELLO,
    tools: Sequence[dict[str, Any]] = (),
    srv: ScriptedModelServer | None = None,
    replay: Sequence[ChatMessage] | None = None,
    **overrides: Any,
) -> Outcome:
    """Play `replies` from a fresh scripted server (or `srv`, given the replies already) through one path; with
    `replay`, a call with those messages comes first (its requests are counted, not its events): what a history's
    earlier turn was, so that the server knows the reasoning it minted then."""
    outcome = Outcome()
    own = srv is None
    server = ScriptedModelServer(list(replies)) if own else srv
    assert server is not None
    if own:
        server.start()
    before = len(server.requests)
    try:
        model = await model_for(path, config_for(server, **overrides))
        if replay is not None:
            await stream_into(Outcome(), model, replay, tools)
        await stream_into(outcome, model, messages, tools)
    finally:
        if own:
            server.stop()
    for request in server.requests[before:]:
        outcome.bodies.append(request.body)
        outcome.headers.append({k: v for k, v in request.headers.items() if k in _HEADERS})
    return outcome


def canonical(body: dict[str, Any]) -> str:
    return json.dumps(body, sort_keys=True)


__all__ = ["HELLO", "MODEL", "SESSION", "LiteLLMResponses", "Outcome", "canonical", "config_for", "run"]
