"""litellm's price map, read without litellm: the same costs and model facts litellm gives."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from coder_agent.llm import catalog
from coder_agent.llm.wire import model_map, price_map
from coder_agent.llm.wire.config import ModelConfig
from coder_agent.llm.wire.price_map import PriceMap
from coder_agent.llm.wire.routes import direct_route
from coder_agent.prestart.early_prompt import route_keys

TOKENS = [(0, 0), (10, 5), (1000, 2000), (150_000, 10), (250_000, 100), (300_000, 1000)]


@pytest.fixture(scope="module")
def prices() -> PriceMap:
    loaded = price_map.load()
    assert loaded is not None
    return loaded


@pytest.fixture(scope="module")
def litellm() -> ModuleType:
    from coder_agent.llm.loader import import_litellm

    return import_litellm()


def chat_models(providers: tuple[str, ...]) -> list[str]:
    path = model_map.map_path()
    assert path is not None
    entries = json.loads(Path(path).read_text())
    models = []
    for key, entry in entries.items():
        if isinstance(entry, dict) and entry.get("mode") == "chat" and entry.get("litellm_provider") in providers:
            provider = entry["litellm_provider"]
            models.append(key if key.startswith(f"{provider}/") else f"{provider}/{key}")
    return models


def test_costs_equal_litellms_cost_per_token_for_every_direct_model(prices: PriceMap, litellm: ModuleType) -> None:
    checked = 0
    for model in chat_models(("openai", "anthropic")):
        provider, name = model.split("/", 1)
        if not prices.has_plain_prices(name, provider):
            continue  # off-peak prices: such models wait for litellm
        for prompt, completion in TOKENS:
            try:
                expected = sum(litellm.cost_per_token(model=model, prompt_tokens=prompt, completion_tokens=completion))
            except Exception:
                expected = None
            assert prices.cost(name, provider, prompt, completion) == pytest.approx(expected, rel=1e-12), model
            checked += 1
    assert checked > 500


def test_a_model_litellm_has_no_price_for_has_none(prices: PriceMap) -> None:
    assert prices.cost("scripted", "openai", 10, 5) is None


def test_catalog_answers_from_the_map_as_litellm_does(prices: PriceMap, litellm: ModuleType) -> None:
    models = chat_models(("openai", "anthropic"))
    models += [model.split("/", 1)[1] for model in models] + ["openai/scripted", "anthropic/claude-unknown"]
    answered = 0
    for model in models:
        reasoning = catalog.map_supports_reasoning(model, prices)
        if reasoning is None:
            continue  # the map cannot say (fine-tunes): only litellm answers
        answered += 1
        assert reasoning == bool(litellm.supports_reasoning(model=model)), model
        try:
            window = catalog.context_window(model)  # litellm is loaded: its answer
        except Exception:
            window = None
        assert catalog.map_context_window(model, prices) == window, model
    assert answered > 200


@pytest.mark.e2e
def test_reading_the_map_does_not_import_litellm() -> None:
    code = (
        "import sys; from coder_agent.llm import catalog; from coder_agent.llm.wire import price_map; "
        "m = price_map.load(); "
        "print(m is not None, catalog.context_window('anthropic/claude-sonnet-4-5'), 'litellm' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True).stdout
    assert out.split() == ["True", "200000", "False"]


def test_a_partial_map_holds_each_entry_as_the_whole_map_does() -> None:
    whole = price_map.load()
    assert whole is not None
    text = Path(str(model_map.map_path())).read_text(encoding="utf-8")
    names = list(json.loads(text))
    odd = [name for name in names if f"\n    {json.dumps(name)}: " not in text]  # litellm's file has one
    assert len(odd) < 10
    for name in odd:
        assert price_map.partial([name]) is None  # unsure: the early call loads the whole map
    part = price_map.partial([*(name for name in names if name not in odd), "no-such/model"])
    assert part is not None
    regular = {name: entry for name, entry in whole._entries.items() if name not in odd}
    assert part._entries == regular  # every other name, the same entry (the last one, as json.loads keeps)
    assert part.entry("no-such/model") is None


@pytest.mark.parametrize(
    "model",
    [
        "openai/bench",
        "openai/gpt-4o",
        "gpt-4o",
        "gpt-4o-mini",
        "anthropic/claude-sonnet-4-5",
        "claude-sonnet-4-5",
        "hosted_vllm/qwen",
        "lm_studio/qwen",
        "openrouter/anthropic/claude-sonnet-4-5",
        "ollama/qwen2.5-coder",
        "o3",
        "openai/gpt-5",
        "deepseek/deepseek-chat",
    ],
)
def test_the_early_call_routes_with_its_partial_map_as_with_the_whole(model: str) -> None:
    whole = price_map.load()
    part = price_map.partial(route_keys(model))
    assert whole is not None and part is not None
    environ = {"OPENAI_API_KEY": "sk-x", "ANTHROPIC_API_KEY": "sk-y", "HOSTED_VLLM_API_BASE": "http://127.0.0.1:1"}
    for api_base in (None, "http://127.0.0.1:9/v1"):
        config = ModelConfig(model=model, api_base=api_base)
        assert direct_route(config, part, environ) == direct_route(config, whole, environ)
