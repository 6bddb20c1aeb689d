"""Whether a model takes images, read from litellm's map without loading it: litellm's own answer, fast."""

from __future__ import annotations

import json
from types import ModuleType

import pytest

from coder_agent.llm.wire import model_map, vision

# Providers users name with a prefix (`gemini/...`); bare names are OpenAI's and Anthropic's.
PROVIDERS = ("openai", "anthropic", "gemini", "openrouter", "mistral", "xai", "groq", "deepseek", "ollama")


@pytest.fixture(scope="module")
def litellm() -> ModuleType:
    from coder_agent.llm.loader import import_litellm

    return import_litellm()


def model_strings() -> list[str]:
    path = model_map.map_path()
    assert path is not None
    found = []
    with open(path, encoding="utf-8") as handle:
        for key, entry in json.load(handle).items():
            if isinstance(entry, dict) and entry.get("mode") == "chat" and entry.get("litellm_provider") in PROVIDERS:
                found.append(key)  # as the map names it: bare, or with its prefix
                if "/" not in key:
                    found.append(f"{entry['litellm_provider']}/{key}")
    return found


def test_the_answer_is_litellms_for_every_chat_model_of_the_common_providers(litellm: ModuleType) -> None:
    models = model_strings()
    assert len(models) > 300
    differ = []
    for model in models:
        try:
            expected = bool(litellm.supports_vision(model=model))
        except Exception:
            expected = False
        if vision.sees_images(model) != expected:
            differ.append((model, expected))
    assert differ == []


@pytest.mark.parametrize(
    ("model", "sees"),
    [("openai/gpt-4o", True), ("anthropic/claude-sonnet-4-5", True), ("openai/scripted", False), ("", False)],
)
def test_known_and_unknown_models_without_litellm(model: str, sees: bool) -> None:
    assert vision.sees_images(model) is sees


def test_an_entry_the_reader_cannot_be_sure_of_is_not_guessed(tmp_path: object) -> None:
    """`model_map.find` reads only litellm's own layout; anything else is "unsure", and then the whole map is read."""
    from pathlib import Path

    path = Path(str(tmp_path)) / "map.json"
    path.write_text('{\n"m": {\n  "litellm_provider": "a", "supports_vision": true}\n}')
    assert model_map.find(["m"], str(path)) is None  # named, but not on a line of its own as litellm writes it
    path.write_text('{\n    "a/m": {"supports_vision": false},\n    "m": {"litellm_provider": "a"}\n}')
    assert model_map.find(["a/m", "m", "z"], str(path)) == {
        "a/m": {"supports_vision": False},
        "m": {"litellm_provider": "a"},
    }
    path.write_text('{\n    "\\u006d": {}\n}')
    assert model_map.find(["m"], str(path)) is None  # an escape could spell any name
