"""Whether a model takes images, as litellm's model map says, answered in about a millisecond. Stdlib only.

`initialize` is answered before anything heavy is imported (see `acp.early`), yet its `promptCapabilities.image`
depends on the configured model. Parsing litellm's 3 MB map takes ~100 ms and importing litellm seconds, so
this looks only the model's entries up (`model_map.find`, ~1-2 ms).

The keys are tried as litellm's lookup does for the common cases: the whole model string
(`openrouter/anthropic/...`, `gemini/gemini-2.5-pro`), then the name after the provider prefix when the entry
belongs to that provider (`anthropic/claude-sonnet-4-5` -> `claude-sonnet-4-5`); a bare name must be an
OpenAI or Anthropic model. A model it does not find takes no images: litellm says the same of models it does
not know. `tests/llm/test_vision.py` compares the answers with litellm's for the map's chat models.
"""

from __future__ import annotations

from . import model_map


def _candidates(model: str) -> list[tuple[str, tuple[str, ...] | None]]:
    """(key, the providers its entry must belong to, if any), in the order litellm would find them."""
    prefix, slash, name = model.partition("/")
    if not slash:  # litellm finds a bare name in its OpenAI and Anthropic model lists only
        return [(model, ("openai", "text-completion-openai", "anthropic"))]
    return [(model, None), (name, (prefix, f"text-completion-{prefix}"))]


def sees_images(model: str | None) -> bool:
    """Whether litellm's map says `model` takes images (`supports_vision`); False when it cannot say."""
    if not model:
        return False
    candidates = _candidates(model)
    entries = model_map.find(key for key, _ in candidates)
    if entries is None:  # a map `find` cannot be sure of: read it all (~30-50 ms, never with litellm's own file)
        try:
            entries = model_map.read_all()
        except (OSError, ValueError):
            return False
    for key, owners in candidates:
        entry = entries.get(key)
        if isinstance(entry, dict) and (owners is None or entry.get("litellm_provider") in owners):
            return entry.get("supports_vision") is True
    return False
