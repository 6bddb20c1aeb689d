"""litellm's model map, read without litellm (`model_info`): the same costs and model facts litellm gives."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from coder_agent.llm import catalog
from coder_agent.llm.wire import model_info, model_map

# (prompt, completion, cache reads, cache writes)
TOKENS = [(0, 0, 0, 0), (10, 5, 0, 0), (1000, 2000, 0, 0), (5000, 10, 4000, 500), (250_000, 100, 200_000, 0)]
# The providers whose wires the agent speaks (their models' costs and facts come from the map on every path).
PROVIDERS = ("openai", "anthropic", "deepseek", "gemini", "xai", "groq", "mistral", "openrouter", "fireworks_ai")


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


def test_costs_with_cache_reads_and_writes_equal_litellms(litellm: ModuleType) -> None:
    checked, differ = 0, []
    for model in chat_models(PROVIDERS):
        info = model_info.info(model)
        if not info.plain_prices:
            continue  # off-peak prices depend on the clock: priced at the standard rate
        for prompt, completion, read, written in TOKENS:
            try:
                expected = sum(
                    litellm.cost_per_token(
                        model=model,
                        prompt_tokens=prompt,
                        completion_tokens=completion,
                        cache_read_input_tokens=read,
                        cache_creation_input_tokens=written,
                    )
                )
            except Exception:
                expected = None
            ours = info.cost(prompt, completion, read, written)
            if ours != pytest.approx(expected, rel=1e-9, abs=1e-12):
                differ.append((model, (prompt, completion, read, written), ours, expected))
            checked += 1
    assert checked > 1000
    assert differ == []


def test_a_model_litellm_has_no_price_for_has_none() -> None:
    assert model_info.info("openai/scripted").cost(10, 5) is None


def test_reasoning_and_context_window_are_litellms(litellm: ModuleType) -> None:
    models = chat_models(("openai", "anthropic"))
    models += [model.split("/", 1)[1] for model in models] + ["openai/scripted", "anthropic/claude-unknown"]
    for model in models:
        if "ft:" in model:
            continue  # fine-tunes: litellm answers for the base model, the map has their own entries
        try:
            reasoning = bool(litellm.supports_reasoning(model=model))
        except Exception:
            reasoning = False
        assert catalog.supports_reasoning(model) == reasoning, model
        try:
            info = litellm.get_model_info(model=model)
            window = info.get("max_input_tokens") or info.get("max_tokens")
        except Exception:
            window = None
        assert catalog.context_window(model) == window, model


@pytest.mark.e2e
def test_asking_does_not_import_litellm() -> None:
    code = (
        "import sys; from coder_agent.llm import catalog; "
        "print(catalog.context_window('anthropic/claude-sonnet-4-5'), catalog.supports_reasoning('claude-sonnet-4-5'),"
        " 'litellm' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True).stdout
    assert out.split() == ["200000", "True", "False"]


def test_the_quick_read_holds_each_entry_as_the_whole_map_does() -> None:
    whole = model_map.read_all()
    text = Path(str(model_map.map_path())).read_text(encoding="utf-8")
    names = list(whole)
    odd = [name for name in names if f"\n    {json.dumps(name)}: " not in text]  # litellm's file has one
    assert len(odd) < 10
    for name in odd:
        assert model_map.find([name]) is None  # unsure: the whole map is read
    part = model_map.find([*(name for name in names if name not in odd), "no-such/model"])
    assert part is not None
    assert part == {name: entry for name, entry in whole.items() if name not in odd}
