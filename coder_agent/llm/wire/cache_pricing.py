"""A call's cost with its cached prompt tokens at their own price, as litellm 1.106.2 prices it. Stdlib only.

From an entry of litellm's model map (`price_map.PriceMap.info`): the prompt tokens not read from the cache at
`input_cost_per_token`, those read from it at `cache_read_input_token_cost` (the input price when the map has
none), the completion tokens at `output_cost_per_token` (reasoning ones at `output_cost_per_reasoning_token` when
the map has one). A prompt past a tier (`<price>_above_<N>k_tokens`) takes that tier's prices, each falling back
to the one below. `tests/llm/test_cache_pricing.py` checks every OpenAI model of the map against litellm.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_TIER = re.compile(
    r"^(?:input_cost_per_token|output_cost_per_token|cache_read_input_token_cost|"
    r"cache_creation_input_token_cost)_above_(\d+)(k?)_tokens$"
)


def _price(entry: Mapping[str, Any], key: str, default: float | None) -> float | None:
    value = entry.get(key)
    return float(value) if isinstance(value, int | float) else default


def _tiers(entry: Mapping[str, Any]) -> list[tuple[int, str]]:
    """(threshold in tokens, its key suffix) for each tier the entry prices, lowest first."""
    found: dict[int, str] = {}
    for key in entry:
        match = _TIER.match(key)
        if match is not None and entry[key] is not None:
            found[int(match[1]) * (1000 if match[2] else 1)] = f"_above_{match[1]}{match[2]}_tokens"
    return sorted(found.items())


def cost_with_cache(
    entry: Mapping[str, Any],
    prompt_tokens: int,
    completion_tokens: int,
    cache_read_tokens: int = 0,
    reasoning_tokens: int = 0,
) -> float:
    prompt_price = _price(entry, "input_cost_per_token", 0.0) or 0.0
    output_price = _price(entry, "output_cost_per_token", 0.0) or 0.0
    cache_price = _price(entry, "cache_read_input_token_cost", None)
    for threshold, suffix in _tiers(entry):
        if prompt_tokens > threshold:
            prompt_price = _price(entry, f"input_cost_per_token{suffix}", prompt_price) or 0.0
            output_price = _price(entry, f"output_cost_per_token{suffix}", output_price) or 0.0
            cache_price = _price(entry, f"cache_read_input_token_cost{suffix}", cache_price)
    cached = min(cache_read_tokens, prompt_tokens)
    cache_price = prompt_price if cache_price is None else cache_price
    prompt_cost = (prompt_tokens - cached) * prompt_price + cached * cache_price
    reasoning_price = _price(entry, "output_cost_per_reasoning_token", None)
    if reasoning_price is None or not reasoning_tokens:
        return prompt_cost + completion_tokens * output_price
    reasoning = min(reasoning_tokens, completion_tokens)
    return prompt_cost + (completion_tokens - reasoning) * output_price + reasoning * reasoning_price


def plain(entry: Mapping[str, Any] | None) -> bool:
    """Whether `cost_with_cache` prices this entry as litellm does (not by the hour, a tier table or the second)."""
    if entry is None:
        return True
    return not any(key in entry for key in ("off_peak_pricing", "tiered_pricing")) and not any(
        "cost_per_second" in key for key in entry
    )


__all__ = ["cost_with_cache", "plain"]
