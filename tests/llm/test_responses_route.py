"""Which models take OpenAI's Responses API for the whole session, where they are posted, and what they cost:
every GPT-5 and o-series model of litellm's map, priced with their cached and reasoning tokens as litellm prices
them (`model_info`, the one price reader of every path)."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import aclosing
from types import ModuleType
from typing import Any

import anyio
import pytest

from coder_agent.llm.base import TextDelta
from coder_agent.llm.factory import make_model, needs_litellm
from coder_agent.llm.messages import TextPart, UserMessage
from coder_agent.llm.responses_model import ResponsesModel
from coder_agent.llm.wire import model_info, model_map
from coder_agent.llm.wire.config import ModelConfig
from coder_agent.llm.wire.responses_route import ResponsesRoute, responses_route
from coder_agent.llm.wire.routes import Route, session_route
from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer

BASE = "http://127.0.0.1:8000/v1"
# (prompt, completion, cached, reasoning) tokens: cached or not, reasoning or not, below and past a price tier
USAGES = [(0, 0, 0, 0), (1000, 200, 0, 150), (4000, 30, 3072, 0), (300_000, 1000, 50_000, 600)]


@pytest.fixture(scope="module")
def prices() -> Mapping[str, Any]:
    """litellm's whole map, to list its models."""
    return model_map.read_all()


@pytest.fixture(scope="module")
def litellm() -> ModuleType:
    from coder_agent.llm.loader import import_litellm

    return import_litellm()


def route(model: str, api_base: str | None = None, env: dict[str, str] | None = None) -> ResponsesRoute | None:
    return responses_route(ModelConfig(model=model, api_base=api_base), {"OPENAI_API_KEY": "sk-env", **(env or {})})


def responses_models(prices: Mapping[str, Any]) -> list[str]:
    names = {key.split("/", 1)[-1] for key in prices if key.startswith(("gpt-5", "o1", "o3", "o4", "openai/"))}
    return sorted(f"openai/{name}" for name in names if route(f"openai/{name}") is not None)


@pytest.mark.parametrize(
    ("model", "api_base", "url"),
    [
        ("openai/gpt-5-mini", None, "https://api.openai.com/v1/responses"),
        ("gpt-5", None, "https://api.openai.com/v1/responses"),
        ("openai/gpt-5.1-codex", BASE, f"{BASE}/responses"),  # a Responses-only model
        ("openai/o3", None, "https://api.openai.com/v1/responses"),
        ("openai/o4-mini", f"{BASE}/", f"{BASE}/responses"),
        ("openai/o1", None, "https://api.openai.com/v1/responses"),
        ("openai/gpt-5.9-preview", None, "https://api.openai.com/v1/responses"),  # not in the map yet: still GPT-5
    ],
)
def test_gpt5_and_o_series_models_take_the_responses_wire(model: str, api_base: str | None, url: str) -> None:
    found = route(model, api_base)
    assert found is not None and found.url == url
    assert found.api_key == "sk-env"
    env = {"OPENAI_API_KEY": "sk-env"}
    assert session_route(ModelConfig(model=model, api_base=api_base), env) == found  # asked before Chat Completions
    assert isinstance(make_model(ModelConfig(model=model, api_base=api_base), environ=env), ResponsesModel)
    assert not needs_litellm(model, api_base, env)


@pytest.mark.parametrize(
    ("model", "api_base"),
    [
        ("openai/gpt-4o", None),  # Chat Completions
        ("openai/gpt-5-search-api", None),  # a search model: Chat Completions only
        ("openai/o3-deep-research", None),  # deep research: no function tools, no use to an agent
        ("gpt-5", BASE),  # a bare name with an api_base: litellm may pick another provider from the URL
        ("openrouter/openai/gpt-5", None),  # another provider's GPT-5
        ("azure/gpt-5", None),
        ("openai/omni-moderation-latest", None),
    ],
)
def test_these_do_not(model: str, api_base: str | None) -> None:
    assert route(model, api_base) is None


def test_a_gpt5_model_the_responses_api_does_not_serve_takes_chat_completions() -> None:
    """A search model is Chat Completions only: the agent speaks it there (with GPT-5's own parameters)."""
    found = session_route(ModelConfig(model="openai/gpt-5-search-api"), {"OPENAI_API_KEY": "sk"})
    assert isinstance(found, Route) and found.url == "https://api.openai.com/v1/chat/completions"


def test_the_base_key_and_organisation_come_from_the_settings_then_openais_variables() -> None:
    env = {"OPENAI_BASE_URL": "https://proxy.example/v1", "OPENAI_ORG_ID": "org-1", "OPENAI_PROJECT": "proj-1"}
    found = route("openai/gpt-5", env=env)
    assert found is not None and found.url == "https://proxy.example/v1/responses"
    assert found.request_headers() == {
        "Authorization": "Bearer sk-env",
        "Content-Type": "application/json",
        "Accept": "application/json",
        "OpenAI-Organization": "org-1",
        "OpenAI-Project": "proj-1",
    }
    configured = responses_route(ModelConfig(model="openai/gpt-5", api_base=BASE, api_key="sk-set"), env)
    assert configured is not None and (configured.url, configured.api_key) == (f"{BASE}/responses", "sk-set")
    assert responses_route(ModelConfig(model="openai/gpt-5"), {}).api_key is None  # type: ignore[union-attr]


def test_every_model_of_the_wire_is_priced_with_its_cached_tokens_as_litellm_prices_it(
    prices: Mapping[str, Any], litellm: ModuleType
) -> None:
    from litellm.types.utils import CompletionTokensDetailsWrapper, PromptTokensDetailsWrapper, Usage

    models = responses_models(prices)
    assert {"openai/gpt-5-mini", "openai/gpt-5.4", "openai/o4-mini", "openai/o1"} <= set(models)
    for model in models:
        info = model_info.info(model)
        if not info.known or not info.plain_prices:
            continue
        for prompt, completion, cached, reasoning in USAGES:
            usage = Usage(
                prompt_tokens=prompt,
                completion_tokens=completion,
                total_tokens=prompt + completion,
                prompt_tokens_details=PromptTokensDetailsWrapper(cached_tokens=cached),
                completion_tokens_details=CompletionTokensDetailsWrapper(reasoning_tokens=reasoning),
            )
            expected = sum(litellm.cost_per_token(model=model, usage_object=usage))
            ours = info.cost(prompt, completion, cached, reasoning=reasoning)
            assert ours == pytest.approx(expected, rel=1e-9, abs=1e-15), (model, prompt, completion, cached)


@pytest.mark.anyio
@pytest.mark.parametrize("model", ["openai/gpt-5-mini", "openai/o3"])
async def test_the_models_calls_take_the_responses_wire_even_once_litellm_is_loaded(
    model: str, litellm: ModuleType
) -> None:
    """One wire for the whole session: litellm would send these to Chat Completions, where their reasoning is lost."""
    with ScriptedModelServer([Reply.text("mine")]) as srv:
        config = ModelConfig(model=model, api_base=srv.url, api_key="sk-test", max_retries=0)
        with anyio.fail_after(30):
            async with aclosing(make_model(config).stream([UserMessage(parts=[TextPart(text="hi")])])) as events:
                texts = [event.text async for event in events if isinstance(event, TextDelta)]
    assert texts == ["mine"]
    sent = [(request.path, request.headers["user-agent"].split("/")[0]) for request in srv.requests]
    assert sent == [("/v1/responses", "python-httpx")]
