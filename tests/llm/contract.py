"""Running one scripted scenario through the direct path and through litellm, and what came out of each."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import anyio

from coder_agent.llm import price_map
from coder_agent.llm.base import Completion, Model, ModelError, ModelEvent, ReasoningDelta, TextDelta
from coder_agent.llm.config import ModelConfig
from coder_agent.llm.direct_model import DirectModel
from coder_agent.llm.litellm_model import LiteLLMModel
from coder_agent.llm.messages import ChatMessage, TextPart, UserMessage
from coder_agent.llm.routes import direct_route
from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer

Path = Literal["direct", "litellm"]
PATHS: tuple[Path, Path] = ("direct", "litellm")
HELLO: list[ChatMessage] = [UserMessage(parts=[TextPart(text="hi")])]


@dataclass(frozen=True)
class Wire:
    """A provider the direct path serves, pointed at the scripted server."""

    name: str
    model: str
    priced_model: str  # one litellm knows prices for, on the same provider
    key_variable: str | None  # where litellm looks for the key; None: it sends a placeholder
    effort_goes_direct: bool = True  # whether a call with a reasoning effort takes the direct path
    key: str = "sk-test"

    def api_base(self, srv: ScriptedModelServer) -> str:
        return srv.anthropic_url if self.model.startswith("anthropic/") else srv.url


OPENAI = Wire("openai", "openai/scripted", "openai/gpt-4o", "OPENAI_API_KEY")
ANTHROPIC = Wire("anthropic", "anthropic/claude-sonnet-4-5", "anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY", False)
VLLM = Wire("hosted_vllm", "hosted_vllm/qwen", "hosted_vllm/qwen", None)
LM_STUDIO = Wire("lm_studio", "lm_studio/qwen", "lm_studio/qwen", None)
WIRES = [OPENAI, ANTHROPIC, VLLM, LM_STUDIO]
# The headers that carry what the provider acts on (the SDKs add their own user agents and such).
_HEADERS = ("authorization", "x-api-key", "anthropic-version", "anthropic-beta", "content-type")


@dataclass
class Outcome:
    events: list[Any] = field(default_factory=list)
    error: tuple[str, bool, int | None] | None = None
    context_window: bool | None = None  # what the error said: the request did not fit
    bodies: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)

    @property
    def requests(self) -> int:
        return len(self.bodies)

    @property
    def completion(self) -> tuple[Any, ...]:
        """("completion", message dict, finish reason, (prompt tokens, completion tokens, cost) or None)."""
        last = self.events[-1]
        assert isinstance(last, tuple) and last[0] == "completion", self.events
        return last

    def texts(self, kind: type[TextDelta] | type[ReasoningDelta] = TextDelta) -> list[str]:
        return [e.text for e in self.events if isinstance(e, kind)]


def config_for(wire: Wire, srv: ScriptedModelServer | None, **overrides: Any) -> ModelConfig:
    config = ModelConfig(
        model=wire.model,
        api_base=wire.api_base(srv) if srv is not None else None,
        api_key=wire.key,
        timeout=5.0,
        max_retries=2,
        retry_base_delay=0.01,
    )
    return replace(config, **overrides)


def model_for(path: Path, config: ModelConfig) -> Model:
    if path == "litellm":
        return LiteLLMModel(config)
    prices = price_map.load()
    assert prices is not None
    route = direct_route(config, prices, os.environ)
    assert route is not None, f"{config.model} does not go direct"
    return DirectModel(config, route, prices)


def _normal(event: ModelEvent) -> Any:
    if isinstance(event, Completion):
        usage = event.usage
        cost = None if usage is None or usage.cost_usd is None else round(usage.cost_usd, 12)
        return (
            "completion",
            event.message.model_dump(),
            event.finish_reason,
            None if usage is None else (usage.prompt_tokens, usage.completion_tokens, cost),
        )
    return event


async def run(
    path: Path,
    wire: Wire,
    replies: Sequence[Reply],
    messages: Sequence[ChatMessage] = HELLO,
    tools: Sequence[dict[str, Any]] = (),
    **overrides: Any,
) -> Outcome:
    """Play `replies` from a fresh scripted server through one path; collect what the caller sees."""
    outcome = Outcome()
    with ScriptedModelServer(list(replies)) as srv:
        model = model_for(path, config_for(wire, srv, **overrides))
        try:
            with anyio.fail_after(30):
                async with aclosing(model.stream(messages, tools)) as events:
                    async for event in events:
                        outcome.events.append(_normal(event) if isinstance(event, Completion) else event)
        except ModelError as exc:
            outcome.error = (exc.message, exc.retryable, exc.status)
            outcome.context_window = exc.context_window
        for request in srv.requests:
            outcome.bodies.append(request.body)
            outcome.headers.append({k: v for k, v in request.headers.items() if k in _HEADERS})
    return outcome


async def both(
    wire: Wire,
    replies: Sequence[Reply],
    messages: Sequence[ChatMessage] = HELLO,
    tools: Sequence[dict[str, Any]] = (),
    **overrides: Any,
) -> Outcome:
    """Run through both paths, assert they agree in every respect, and return the (shared) outcome."""
    direct = await run("direct", wire, replies, messages, tools, **overrides)
    via_litellm = await run("litellm", wire, replies, messages, tools, **overrides)
    assert direct.error == via_litellm.error
    assert direct.context_window == via_litellm.context_window
    assert direct.events == via_litellm.events
    assert direct.requests == via_litellm.requests
    assert _canonical(direct.bodies) == _canonical(via_litellm.bodies)
    assert direct.headers == via_litellm.headers
    return direct


def _canonical(bodies: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(body, sort_keys=True) for body in bodies]


__all__ = ["ANTHROPIC", "OPENAI", "PATHS", "WIRES", "Outcome", "both", "config_for", "run"]
