"""Running one scripted scenario through the direct path, through litellm and (OpenAI wire) through the early first
call taken over by the direct path, and what came out of each."""

from __future__ import annotations

import json
import os
import select
from collections.abc import Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio

from coder_agent.llm import http_client
from coder_agent.llm.base import Completion, Model, ModelError, ModelEvent, ReasoningDelta, TextDelta, Usage
from coder_agent.llm.direct_model import DirectModel
from coder_agent.llm.litellm_model import LiteLLMModel
from coder_agent.llm.loader import load_litellm
from coder_agent.llm.messages import ChatMessage, TextPart, UserMessage
from coder_agent.llm.wire.config import ModelConfig
from coder_agent.llm.wire.routes import route_for, route_headers
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
    early: bool = True  # whether the early first call's take-over is run too (`prestart.early_prompt`)
    key: str = "sk-test"
    reasoning_field: str = "reasoning_content"  # where the provider streams the model's reasoning
    reasoning_back: bool = True  # whether the reasoning goes back on assistant messages

    def api_base(self, srv: ScriptedModelServer) -> str:
        return srv.anthropic_url if self.model.startswith("anthropic/") else srv.url


OPENAI = Wire("openai", "openai/scripted", "openai/gpt-4o", "OPENAI_API_KEY")
ANTHROPIC = Wire("anthropic", "anthropic/claude-sonnet-4-5", "anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY")
VLLM = Wire("hosted_vllm", "hosted_vllm/qwen", "hosted_vllm/qwen", None)
LM_STUDIO = Wire("lm_studio", "lm_studio/qwen", "lm_studio/qwen", None)
WIRES = [OPENAI, ANTHROPIC, VLLM, LM_STUDIO]
# The hosted providers that offer Chat Completions (`test_contract_providers.py`): the early call's take-over is the
# same on every one of them (the OpenAI wire runs it).
PROVIDERS = [
    Wire("openrouter", "openrouter/openai/gpt-4o", "openrouter/openai/gpt-4o", "OPENROUTER_API_KEY", early=False,
         reasoning_field="reasoning", reasoning_back=False),
    Wire("groq", "groq/llama-3.3-70b-versatile", "groq/llama-3.3-70b-versatile", "GROQ_API_KEY", early=False,
         reasoning_field="reasoning", reasoning_back=False),
    Wire("deepseek", "deepseek/deepseek-chat", "deepseek/deepseek-chat", "DEEPSEEK_API_KEY", early=False),
    Wire("xai", "xai/grok-3-mini", "xai/grok-3-mini", "XAI_API_KEY", early=False),
    Wire("mistral", "mistral/mistral-large-latest", "mistral/mistral-large-latest", "MISTRAL_API_KEY", early=False,
         reasoning_back=False),
    Wire("together_ai", "together_ai/Qwen/Qwen3-Coder", "together_ai/Qwen/Qwen3-Coder", "TOGETHERAI_API_KEY",
         early=False),
    Wire("cerebras", "cerebras/qwen-3-coder-480b", "cerebras/qwen-3-coder-480b", "CEREBRAS_API_KEY", early=False,
         reasoning_back=False),
]  # fmt: skip
# The headers that carry what the provider acts on (the SDKs add their own user agents and such).
_HEADERS = ("authorization", "x-api-key", "anthropic-version", "anthropic-beta", "content-type")


@dataclass
class Outcome:
    events: list[Any] = field(default_factory=list)
    error: tuple[str, bool, int | None] | None = None
    context_window: bool | None = None  # what the error said: the request did not fit
    bodies: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)  # what the early first call had shown (thoughts and text)

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
    return config.replace(**overrides)


def model_for(path: Path, config: ModelConfig) -> Model:
    if path == "litellm":
        return LiteLLMModel(config)
    route = route_for(config, os.environ)
    assert route is not None, f"{config.model} is not on a wire the agent speaks"
    return DirectModel(config, route)


async def _start_early(model: DirectModel, body: bytes, stop_after: int | None) -> early_call.EarlyCall | None:
    """What the early stage does (`prestart.early_prompt`): post `body`, show text until `stop_after` pieces were
    shown (None: as far as it reads), hand the call down. The call, or None when none was started."""
    if model.route.api_key is None:
        return None  # the early stage leaves such a call to the full agent (`early_prompt.Prep`)
    try:
        response = raw_http.post(model.route.url, route_headers(model.route), body, model.config.timeout)
    except OSError:
        return None  # as the early stage does: the adapter meets the failure itself, and reports it
    call = early_call.EarlyCall(model.route.url, body, response, "msg_early")
    shown: list[tuple[str, str]] = []

    def wait(response: raw_http.RawResponse) -> bool:
        if stop_after is not None and len(call.shown) >= stop_after:
            return False
        if response.buffered():
            return True
        return bool(select.select([response.sock], [], [], response.stall_left())[0])

    def show(kind: str, text: str) -> None:
        shown.append((kind, text))

    text_of = early_call.TEXT_OF[model.route.wire]
    await anyio.to_thread.run_sync(early_call.stream_text, call, show, wait, text_of)
    assert shown == call.shown
    return call


def _tokens(usage: Usage) -> tuple[int, int, int, int]:
    return usage.prompt_tokens, usage.completion_tokens, usage.cache_read_tokens, usage.cache_write_tokens


def _normal(event: ModelEvent) -> Any:
    if isinstance(event, Completion):
        usage = event.usage
        cost = None if usage is None or usage.cost_usd is None else round(usage.cost_usd, 12)
        return (
            "completion",
            event.message.model_dump(),
            event.finish_reason,
            None if usage is None else (*_tokens(usage)[:2], cost, *_tokens(usage)[2:]),
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
        if early is not False:
            assert isinstance(model, DirectModel)
            body = json.dumps(model.request(messages, tools)).encode()
            model.early = await _start_early(model, body, early)
            # and the calls after it (the retries here) go over the same transport, as until httpx is ready
            prepared = http_client.prepared
            http_client.prepared = lambda: False  # type: ignore[assignment]
        if path == "litellm":  # its import, on a busy machine, is not the scenario's time
            with anyio.fail_after(180):
                await load_litellm()
        try:
            with anyio.fail_after(30):
                async with aclosing(model.stream(messages, tools)) as events:
                    async for event in events:
                        outcome.events.append(_normal(event) if isinstance(event, Completion) else event)
        except ModelError as exc:
            outcome.error = (exc.message, exc.retryable, exc.status)
            outcome.context_window = exc.context_window
        finally:
            if early is not False:
                http_client.prepared = prepared  # type: ignore[assignment]
                assert isinstance(model, DirectModel)
                if model.early is not None:
                    outcome.shown = [text for _, text in model.early.shown]
                    assert model.early.adopted or not model.early.shown
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
    assert _canonical([as_litellm_would(wire, b) for b in direct.bodies]) == _canonical(
        [as_litellm_would(wire, b) for b in via_litellm.bodies]
    )
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
            streamed = [e.text for e in direct.events if isinstance(e, TextDelta | ReasoningDelta)]
            assert taken_over.shown == streamed[: len(taken_over.shown)]
            outcome_early.append(taken_over)
    return direct


def as_litellm_would(wire: Wire, body: dict[str, Any]) -> dict[str, Any]:
    """A request less what the agent's adapter sends differently from litellm on purpose, on either side:

    - Anthropic: the prompt-cache breakpoints (`cache_control`): litellm adds none; ours mark the end of the system
      prompt and the two newest user turns, so that each call reads the last one's prefix from the cache.
    - Chat Completions: Anthropic's signed `thinking_blocks` on assistant messages, which litellm passes on to any
      provider: they mean nothing off Anthropic's wire, and strict providers refuse unknown message fields.
    - Groq, Cerebras: the model's `reasoning_content` on assistant messages, which litellm sends back: both refuse it
      (400 "property 'reasoning_content' is unsupported"). OpenRouter reads its own `reasoning_details` instead.
    """
    body = json.loads(json.dumps(body))
    if wire.model.startswith("anthropic/"):
        for part in (body.get("system") or [], body.get("tools") or []):
            for block in part:
                block.pop("cache_control", None)
        for message in body.get("messages", []):
            for block in message["content"] if isinstance(message["content"], list) else []:
                block.pop("cache_control", None)
    else:
        for message in body.get("messages", []):
            message.pop("thinking_blocks", None)
            if not wire.reasoning_back:
                message.pop("reasoning_content", None)
    return body


def _canonical(bodies: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(body, sort_keys=True) for body in bodies]


__all__ = ["ANTHROPIC", "OPENAI", "PATHS", "PROVIDERS", "WIRES", "Outcome", "both", "config_for", "run"]
