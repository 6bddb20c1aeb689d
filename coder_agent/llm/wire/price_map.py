"""Prices and context windows as litellm's model map has them (`model_map` reads it), without importing litellm.

The whole map is read once, in a worker thread (`load()`), never on the event loop; until then every answer is
None. The early first call routes with only its model's entries (`partial`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from . import model_map

_lock = threading.Lock()
_loaded: PriceMap | None = None
_failed = False


class PriceMap:
    def __init__(self, entries: dict[str, Any]) -> None:
        self._entries = {name: info for name, info in entries.items() if isinstance(info, dict)}

    def entry(self, key: str) -> dict[str, Any] | None:
        """The entry stored under exactly `key`, whatever its provider."""
        return self._entries.get(key)

    def info(self, model: str, provider: str) -> dict[str, Any] | None:
        """The entry litellm uses for `model` (the name the provider knows) on `provider`."""
        for key in (f"{provider}/{model}", model):
            entry = self._entries.get(key)
            if entry is not None and entry.get("litellm_provider") in (provider, f"text-completion-{provider}"):
                return entry
        return None

    def is_known(self, model: str, provider: str) -> bool:
        return self.info(model, provider) is not None

    def cost(self, model: str, provider: str, prompt_tokens: int, completion_tokens: int) -> float | None:
        """What litellm's `cost_per_token` says for these token counts, or None when it knows no price."""
        entry = self.info(model, provider)
        if entry is None:
            return None
        input_cost = _tiered(entry, "input_cost_per_token", prompt_tokens)
        output_cost = _tiered(entry, "output_cost_per_token", prompt_tokens)
        return prompt_tokens * input_cost + completion_tokens * output_cost

    def has_plain_prices(self, model: str, provider: str) -> bool:
        """Whether `cost` prices this model as litellm does: per token, by prompt-size tier, at any hour.

        Off-peak prices (litellm reads the clock) and per-second prices are not reproduced.
        """
        entry = self.info(model, provider)
        if entry is None:
            return True  # no price at all: both paths report none
        return "off_peak_pricing" not in entry and not any("cost_per_second" in key for key in entry)


def _tiered(entry: dict[str, Any], field: str, prompt_tokens: int) -> float:
    """The per-token price, taking the highest `<field>_above_<N>k_tokens` tier the prompt exceeds."""
    price = float(entry.get(field) or 0.0)
    best = 0
    prefix = f"{field}_above_"
    for key, value in entry.items():
        if key.startswith(prefix) and key.endswith("k_tokens") and value is not None:
            try:
                threshold = int(key[len(prefix) : -len("k_tokens")]) * 1000
            except ValueError:
                continue
            if prompt_tokens > threshold and threshold > best:
                best, price = threshold, float(value)
    return price


def load() -> PriceMap | None:
    """Read the map once (thread-safe; blocking: call it from a worker thread)."""
    global _loaded, _failed
    if _loaded is not None or _failed:
        return _loaded
    with _lock:
        if _loaded is None and not _failed:
            try:
                _loaded = PriceMap(model_map.read_all())
            except (OSError, ValueError) as exc:
                import logging  # here: the early first call reads the map (`partial`) before logging is imported

                logging.getLogger(__name__).warning("cannot read litellm's price map (%s): costs wait for litellm", exc)
                _failed = True
    return _loaded


def partial(keys: Iterable[str]) -> PriceMap | None:
    """A map holding only the entries of `keys`, each the same as in the whole map (`model_map.find`: ~1 ms, not
    ~30: the early first call routes with it). None when unsure: the caller loads it all."""
    entries = model_map.find(keys)
    return None if entries is None else PriceMap(entries)


def loaded() -> PriceMap | None:
    """The map if it has been read already (never blocks)."""
    return _loaded
