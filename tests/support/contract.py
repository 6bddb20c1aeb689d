"""Running one scripted scenario through the direct path, through litellm and (OpenAI wire) through the early first
call taken over by the direct path, and what came out of each."""

from __future__ import annotations

import json
import os
import select
from collections.abc import Sequence
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import anyio

from coder_agent.llm import http_client
from coder_agent.llm.base import Completion, Model, ModelError, ModelEvent, ReasoningDelta, TextDelta
from coder_agent.llm.direct_model import DirectModel
from coder_agent.llm.litellm_model import LiteLLMModel
from coder_agent.llm.messages import ChatMessage, TextPart, UserMessage
from coder_agent.llm.wire import price_map
from coder_agent.llm.wire.config import ModelConfig
from coder_agent.llm.wire.routes import direct_route, route_headers
from coder_agent.prestart import early_call, raw_http
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
    early: bool = True  # whether the early first call streams this wire (`server.early_prompt`)
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
    shown: list[str] = field(default_factory=list)  # text deltas the early first call had shown

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


async def _start_early(model: DirectModel, body: bytes, stop_after: int | None) -> list[str]:
    """What the early stage does (`server.early_prompt`): post `body`, show text until `stop_after` deltas were
    shown (None: as far as it reads), hand the call over. The texts it showed."""
    if model.route.api_key is None:
        return []  # the early stage leaves such a call to the full agent (`early_prompt.Prep`)
    try:
        response = raw_http.post(model.route.url, route_headers(model.route), body, model.config.timeout)
    except OSError:
        return []  # as the early stage does: the direct path meets the failure itself, and reports it
    call = early_call.EarlyCall(model.route.url, body, response, "msg_early")
    shown: list[str] = []

    def wait(response: raw_http.RawResponse) -> bool:
        if stop_after is not None and len(call.shown) >= stop_after:
            return False
        if response.buffered():
            return True
        return bool(select.select([response.sock], [], [], response.stall_left())[0])

    text_of = early_call.TEXT_OF[model.route.wire]
    await anyio.to_thread.run_sync(early_call.stream_text, call, shown.append, wait, text_of)
    early_call.hand_over(call)
    assert shown == call.shown
    return shown


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
    early: int | bool | None = False,
    **overrides: Any,
) -> Outcome:
    """Play `replies` from a fresh scripted server through one path; collect what the caller sees.

    With `early` (direct path only), the early first call starts it and shows up to `early` text deltas
    (None: as many as it reads before the reply holds anything else), then the direct path takes it over.
    """
    outcome = Outcome()
    with ScriptedModelServer(list(replies)) as srv:
        model = model_for(path, config_for(wire, srv, **overrides))
        shown: list[str] = []
        if early is not False:
            assert isinstance(model, DirectModel)
            body = json.dumps(model.request(messages, tools)).encode()
            shown = await _start_early(model, body, early)
            # and the calls after it (the retries here) go over the same transport, as until httpx is ready
            early_call.allow_plain(model.route.url, None)
            prepared = http_client.prepared
            http_client.prepared = lambda: False  # type: ignore[assignment]
        try:
            with anyio.fail_after(30):
                async with aclosing(model.stream(messages, tools)) as events:
                    async for event in events:
                        if isinstance(event, TextDelta) and event.shown is not None:
                            assert event.shown == "msg_early" and event.text == shown[len(outcome.shown)]
                            outcome.shown.append(event.text)
                            event = TextDelta(event.text)
                        outcome.events.append(_normal(event) if isinstance(event, Completion) else event)
        except ModelError as exc:
            outcome.error = (exc.message, exc.retryable, exc.status)
            outcome.context_window = exc.context_window
        finally:
            if early is not False:
                http_client.prepared = prepared  # type: ignore[assignment]
                early_call.forget_plain()
        for request in srv.requests:
            outcome.bodies.append(request.body)
            outcome.headers.append({k: v for k, v in request.headers.items() if k in _HEADERS})
    return outcome


async def both(
    wire: Wire,
    replies: Sequence[Reply],
    messages: Sequence[ChatMessage] = HELLO,
    tools: Sequence[dict[str, Any]] = (),
    outcome_early: list[Outcome] | None = None,
    **overrides: Any,
) -> Outcome:
    """Run through both paths, assert they agree in every respect, and return the (shared) outcome.

    The early first call taken over by the direct path (after one text delta, and after as
    many as it reads) must agree with the direct path as well; `outcome_early` gets those outcomes."""
    direct = await run("direct", wire, replies, messages, tools, **overrides)
    via_litellm = await run("litellm", wire, replies, messages, tools, **overrides)
    assert direct.error == via_litellm.error
    assert direct.context_window == via_litellm.context_window
    assert direct.events == via_litellm.events
    assert direct.requests == via_litellm.requests
    assert _canonical(direct.bodies) == _canonical(via_litellm.bodies)
    assert direct.headers == via_litellm.headers
    outcome_early = [] if outcome_early is None else outcome_early
    if wire.early:
        for stop_after in (1, None):
            taken_over = await run("direct", wire, replies, messages, tools, early=stop_after, **overrides)
            assert taken_over.error == direct.error
            assert taken_over.context_window == direct.context_window
            assert taken_over.events == direct.events
            assert taken_over.requests == direct.requests
            assert taken_over.bodies == direct.bodies
            assert taken_over.headers == direct.headers
            assert taken_over.shown == direct.texts()[: len(taken_over.shown)]
            outcome_early.append(taken_over)
    return direct


def _canonical(bodies: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(body, sort_keys=True) for body in bodies]


__all__ = ["ANTHROPIC", "OPENAI", "PATHS", "WIRES", "Outcome", "both", "config_for", "run"]
