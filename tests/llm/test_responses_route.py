"""Which models take OpenAI's Responses API for the whole session, where they are posted, and what they cost:
every GPT-5 and o-series model of litellm's map, priced with their cached tokens as litellm prices them."""

from __future__ import annotations

from contextlib import aclosing
from types import ModuleType

import anyio
import pytest

from coder_agent.llm.base import TextDelta
from coder_agent.llm.fast_start import FastStartModel
from coder_agent.llm.messages import TextPart, UserMessage
from coder_agent.llm.wire import price_map
from coder_agent.llm.wire.cache_pricing import cost_with_cache, plain
from coder_agent.llm.wire.config import ModelConfig
from coder_agent.llm.wire.price_map import PriceMap
from coder_agent.llm.wire.responses_route import ResponsesRoute, responses_route
from coder_agent.prestart.early_prompt import route_keys
from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer

BASE = "http://127.0.0.1:8000/v1"
# (prompt, completion, cached, reasoning) tokens: cached or not, reasoning or not, below and past a price tier
USAGES = [(0, 0, 0, 0), (1000, 200, 0, 150), (4000, 30, 3072, 0), (300_000, 1000, 50_000, 600)]


@pytest.fixture(scope="module")
def prices() -> PriceMap:
    loaded = price_map.load()
    assert loaded is not None
    return loaded


@pytest.fixture(scope="module")
def litellm() -> ModuleType:
    from coder_agent.llm.loader import import_litellm

    return import_litellm()


def route(
    prices: PriceMap, model: str, api_base: str | None = None, env: dict[str, str] | None = None
) -> ResponsesRoute | None:
    return responses_route(model, api_base, None, prices, {"OPENAI_API_KEY": "sk-env", **(env or {})})


def responses_models(prices: PriceMap) -> list[str]:
    names = {key.split("/", 1)[-1] for key in prices._entries if key.startswith(("gpt-5", "o1", "o3", "o4", "openai/"))}
    return sorted(f"openai/{name}" for name in names if route(prices, f"openai/{name}") is not None)


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
def test_gpt5_and_o_series_models_take_the_responses_wire(
    prices: PriceMap, model: str, api_base: str | None, url: str
) -> None:
    found = route(prices, model, api_base)
    assert found is not None and found.url == url
    assert found.api_key == "sk-env"


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
def test_these_do_not(prices: PriceMap, model: str, api_base: str | None) -> None:
    assert route(prices, model, api_base) is None


def test_the_base_key_and_organisation_come_from_the_settings_then_openais_variables(prices: PriceMap) -> None:
    env = {"OPENAI_BASE_URL": "https://proxy.example/v1", "OPENAI_ORG_ID": "org-1", "OPENAI_PROJECT": "proj-1"}
    found = route(prices, "openai/gpt-5", env=env)
    assert found is not None and found.url == "https://proxy.example/v1/responses"
    assert found.request_headers() == {
        "Authorization": "Bearer sk-env",
        "Content-Type": "application/json",
        "Accept": "application/json",
        "OpenAI-Organization": "org-1",
        "OpenAI-Project": "proj-1",
    }
    configured = responses_route("openai/gpt-5", BASE, "sk-set", prices, env)
    assert configured is not None and (configured.url, configured.api_key) == (f"{BASE}/responses", "sk-set")
    assert responses_route("openai/gpt-5", None, None, prices, {}).api_key is None  # type: ignore[union-attr]


def test_every_model_of_the_wire_is_priced_with_its_cached_tokens_as_litellm_prices_it(
    prices: PriceMap, litellm: ModuleType
) -> None:
    from litellm.types.utils import CompletionTokensDetailsWrapper, PromptTokensDetailsWrapper, Usage

    models = responses_models(prices)
    assert {"openai/gpt-5-mini", "openai/gpt-5.4", "openai/o4-mini", "openai/o1"} <= set(models)
    for model in models:
        found = route(prices, model)
        assert found is not None
        if found.prices is None or not plain(found.prices):
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
            ours = cost_with_cache(found.prices, prompt, completion, cached, reasoning)
            assert ours == pytest.approx(expected, rel=1e-9, abs=1e-15), (model, prompt, completion, cached)


@pytest.mark.anyio
@pytest.mark.parametrize("model", ["openai/gpt-5-mini", "openai/o3"])
async def test_the_models_calls_take_the_responses_wire_even_once_litellm_is_loaded(model: str) -> None:
    """No mid-session hand-over: litellm would send these to Chat Completions, where their reasoning is lost."""
    with ScriptedModelServer([Reply.text("mine")]) as srv:
        config = ModelConfig(model=model, api_base=srv.url, api_key="sk-test", max_retries=0)
        with anyio.fail_after(30):
            async with aclosing(
                FastStartModel(config, litellm_ready=lambda: True).stream([UserMessage(parts=[TextPart(text="hi")])])
            ) as events:
                texts = [event.text async for event in events if isinstance(event, TextDelta)]
    assert texts == ["mine"]
    sent = [(request.path, request.headers["user-agent"].split("/")[0]) for request in srv.requests]
    assert sent == [("/v1/responses", "python-httpx")]


@pytest.mark.parametrize("model", ["openai/gpt-5-mini", "gpt-5", "openai/o4-mini", "openai/gpt-5.1-codex"])
def test_the_early_call_routes_with_its_partial_map_as_with_the_whole(prices: PriceMap, model: str) -> None:
    partial = price_map.partial(route_keys(model))
    assert partial is not None
    assert responses_route(model, None, "sk", partial, {}) == responses_route(model, None, "sk", prices, {})
