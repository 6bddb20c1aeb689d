"""What litellm's model map says of one model: its prices, context window, output limit and abilities. Stdlib only.

One lookup for every question the agent asks of a model (the cost of a call, whether it thinks or sees images, its
context window, the output limit an Anthropic request needs), on every path, before the runtime is in and after: the
answers never change in the middle of a session. `model_map.find` reads only the model's entries (~1 ms), so the
early stage asks too.

The keys are tried as litellm's lookup does for the common cases: the whole model string (`gemini/gemini-2.5-pro`,
`deepseek/deepseek-chat`), then the name after the provider prefix when the entry belongs to that provider
(`anthropic/claude-sonnet-4-5` -> `claude-sonnet-4-5`); a bare name must be an OpenAI or Anthropic model. A model
the map does not know has no price and no abilities: litellm says the same of it. `tests/llm/test_model_info.py`
compares the answers (and the costs) with litellm's.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from . import model_map

_BARE_OWNERS = ("openai", "text-completion-openai", "anthropic")


def candidates(model: str) -> list[tuple[str, tuple[str, ...] | None]]:
    """(key, the providers its entry must belong to, if any), in the order litellm would find them."""
    prefix, slash, name = model.partition("/")
    if not slash:  # litellm finds a bare name in its OpenAI and Anthropic model lists only
        return [(model, _BARE_OWNERS)]
    return [(model, None), (name, (prefix, f"text-completion-{prefix}"))]


_NO_ENTRY: Mapping[str, Any] = MappingProxyType({})


class ModelInfo(NamedTuple):
    """A model's entry in the map (empty when the map does not know it)."""

    entry: Mapping[str, Any] = _NO_ENTRY

    @property
    def known(self) -> bool:
        return bool(self.entry)

    def _flag(self, name: str) -> bool:
        return self.entry.get(name) is True

    @property
    def supports_reasoning(self) -> bool:
        return self._flag("supports_reasoning")

    @property
    def supports_vision(self) -> bool:
        return self._flag("supports_vision")

    @property
    def adaptive_thinking(self) -> bool:
        """An Anthropic model that thinks adaptively (`thinking: {"type": "adaptive"}`) rather than to a budget."""
        return self._flag("supports_adaptive_thinking")

    @property
    def context_window(self) -> int | None:
        size = self.entry.get("max_input_tokens") or self.entry.get("max_tokens")
        return int(size) if isinstance(size, int | float) and size > 0 else None

    @property
    def max_output_tokens(self) -> int | None:
        limit = self.entry.get("max_output_tokens", self.entry.get("max_tokens"))
        return limit if isinstance(limit, int) and limit > 0 else None

    @property
    def cache_min_tokens(self) -> int | None:
        """The shortest prefix the provider caches, where the map says (Anthropic's Haiku 4.5: 4,096)."""
        value = self.entry.get("prompt_cache_min_tokens")
        return value if isinstance(value, int) else None

    def cost(
        self, prompt_tokens: int, completion_tokens: int, cache_read: int = 0, cache_write: int = 0, reasoning: int = 0
    ) -> float | None:
        """What the call costs, as litellm prices it: the prompt tokens neither read from nor written to the cache
        at the input price, cache reads and writes at their own prices (the input price where the map has none),
        each by the tier of the prompt's size; of the completion tokens, the `reasoning` ones at the map's reasoning
        price where it has one (the Responses API counts them); None when the map does not know the model."""
        entry = self.entry
        if not entry:
            return None
        input_price = _tiered(entry, "input_cost_per_token", prompt_tokens, 0.0)
        # Fireworks bills cache reads at half the input price where the map names no price for them (as litellm).
        unnamed_read = input_price * 0.5 if entry.get("litellm_provider") == "fireworks_ai" else input_price
        read_price = _tiered(entry, "cache_read_input_token_cost", prompt_tokens, unnamed_read)
        write_price = _tiered(entry, "cache_creation_input_token_cost", prompt_tokens, input_price)
        output_price = _tiered(entry, "output_cost_per_token", prompt_tokens, 0.0)
        uncached = max(prompt_tokens - cache_read - cache_write, 0)
        prompt_cost = uncached * input_price + cache_read * read_price + cache_write * write_price
        reasoning_price = self.entry.get("output_cost_per_reasoning_token")
        if not reasoning or not isinstance(reasoning_price, int | float):
            return prompt_cost + completion_tokens * output_price
        thought = min(reasoning, completion_tokens)
        return prompt_cost + (completion_tokens - thought) * output_price + thought * float(reasoning_price)

    @property
    def plain_prices(self) -> bool:
        """Whether `cost` prices this model as litellm does: per token, by prompt-size tier, at any hour (off-peak
        prices, which depend on the clock, and per-second prices are not reproduced)."""
        return "off_peak_pricing" not in self.entry and not any("cost_per_second" in key for key in self.entry)


def _tiered(entry: Mapping[str, Any], name: str, prompt_tokens: int, default: float) -> float:
    """The per-token price, taking the highest `<name>_above_<N>k_tokens` tier the prompt exceeds."""
    value = entry.get(name)
    price = float(value) if isinstance(value, int | float) else default
    best = 0
    prefix = f"{name}_above_"
    for key, tier in entry.items():
        if key.startswith(prefix) and key.endswith("k_tokens") and isinstance(tier, int | float):
            try:
                threshold = int(key[len(prefix) : -len("k_tokens")]) * 1000
            except ValueError:
                continue
            if prompt_tokens > threshold and threshold > best:
                best, price = threshold, float(tier)
    return price


def pick(model: str, entries: Mapping[str, Any]) -> ModelInfo:
    """The entry litellm would use for `model`, from entries holding (at least) its candidate keys."""
    for key, owners in candidates(model):
        entry = entries.get(key)
        if isinstance(entry, dict) and (owners is None or entry.get("litellm_provider") in owners):
            return ModelInfo(entry)
    return ModelInfo()


_lock = threading.Lock()
_known: dict[str, ModelInfo] = {}


def info(model: str | None) -> ModelInfo:
    """What the map says of `model` (blocking for ~1 ms the first time, for the whole map's ~40 ms where the quick
    read cannot be sure; remembered for the process)."""
    if not model:
        return ModelInfo()
    found = _known.get(model)
    if found is not None:
        return found
    keys = [key for key, _ in candidates(model)]
    entries = model_map.find(keys)
    if entries is None:  # a map `find` cannot be sure of: read it all (never with litellm's own file)
        try:
            entries = model_map.read_all()
        except (OSError, ValueError):
            entries = {}
    found = pick(model, entries)
    with _lock:
        _known[model] = found
    return found
