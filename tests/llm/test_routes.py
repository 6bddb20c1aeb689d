"""Which calls may skip litellm, decided from the model string, the settings and the environment alone."""

from __future__ import annotations

import pytest

from coder_agent.llm.wire import price_map
from coder_agent.llm.wire.config import ModelConfig
from coder_agent.llm.wire.price_map import PriceMap
from coder_agent.llm.wire.routes import Route, direct_route

BASE = "http://127.0.0.1:8000/v1"


@pytest.fixture(scope="module")
def prices() -> PriceMap:
    loaded = price_map.load()
    assert loaded is not None
    return loaded


def route(prices: PriceMap, model: str, env: dict[str, str] | None = None, **config: object) -> Route | None:
    return direct_route(ModelConfig(model=model, **config), prices, {"OPENAI_API_KEY": "sk", **(env or {})})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("model", "api_base", "url"),
    [
        ("openai/qwen-coder", BASE, f"{BASE}/chat/completions"),
        ("openai/gpt-4o", None, "https://api.openai.com/v1/chat/completions"),
        ("gpt-4o", None, "https://api.openai.com/v1/chat/completions"),
        ("anthropic/claude-sonnet-4-5", None, "https://api.anthropic.com/v1/messages"),
        ("claude-sonnet-4-5", None, "https://api.anthropic.com/v1/messages"),
        ("anthropic/claude-sonnet-4-5", "http://proxy:1/v1/messages", "http://proxy:1/v1/messages"),
        ("hosted_vllm/qwen", BASE, f"{BASE}/chat/completions"),
        ("lm_studio/qwen", BASE, f"{BASE}/chat/completions"),
    ],
)
def test_these_go_direct_to_the_url_litellm_would_use(
    prices: PriceMap, model: str, api_base: str | None, url: str
) -> None:
    found = route(prices, model, api_base=api_base)
    assert found is not None and found.url == url


@pytest.mark.parametrize(
    ("model", "api_base"),
    [
        ("openai/o3-mini", None),  # o-series and GPT-5: the Responses API (test_responses_route.py)
        ("openai/gpt-5", None),
        ("gpt-4o", BASE),  # a bare name with an api_base: litellm may pick the provider from the URL
        ("gemini/gemini-2.5-pro", None),
        ("openrouter/openai/gpt-4o", None),
        ("groq/llama-3.1-8b-instant", None),
        ("deepseek/deepseek-chat", None),
        ("ollama/qwen2.5-coder", None),
        ("hosted_vllm/qwen", None),  # no api_base: litellm fails its own way
        ("gpt-oss-foo", BASE),  # no provider litellm knows: it says so
    ],
)
def test_these_wait_for_litellm(prices: PriceMap, model: str, api_base: str | None) -> None:
    assert route(prices, model, api_base=api_base) is None


@pytest.mark.parametrize("variable", ["OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "SSL_VERIFY", "DISABLE_AIOHTTP_TRUST_ENV"])
def test_environment_we_do_not_reproduce_sends_calls_through_litellm(prices: PriceMap, variable: str) -> None:
    assert route(prices, "openai/qwen", api_base=BASE) is not None
    assert route(prices, "openai/qwen", {variable: "x"}, api_base=BASE) is None


def test_keys_come_from_the_setting_then_the_providers_variable(prices: PriceMap) -> None:
    assert route(prices, "openai/q", api_base=BASE, api_key="mine").api_key == "mine"  # type: ignore[union-attr]
    assert route(prices, "openai/q", api_base=BASE).api_key == "sk"  # type: ignore[union-attr]
    assert route(prices, "lm_studio/q", api_base=BASE).api_key == "fake-api-key"  # type: ignore[union-attr]
    anthropic = route(prices, "anthropic/claude-sonnet-4-5", {"ANTHROPIC_API_KEY": " "})
    assert anthropic is not None and anthropic.api_key is None  # blank is unset: the call says no key was found


def test_a_reasoning_effort_is_passed_on_only_where_litellm_passes_it(prices: PriceMap) -> None:
    unknown = route(prices, "openai/qwen", api_base=BASE, reasoning_effort="low")
    known = route(prices, "openai/gpt-4o", reasoning_effort="low")
    assert unknown is not None and unknown.send_reasoning_effort
    assert known is not None and not known.send_reasoning_effort
