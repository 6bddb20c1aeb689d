"""What litellm knows about a model (reasoning support, context window).

litellm answers once it is loaded. Before that, litellm's own price map (read without importing it, see
`price_map.py`) answers for the providers whose lookups we reproduce exactly; otherwise the answer is
None. Asking never imports litellm or reads the map on the caller's thread.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from .wire import price_map, vision
from .wire.price_map import PriceMap
from .wire.routes import provider_and_name

log = logging.getLogger(__name__)

# Providers whose entries we find as litellm does (tests/llm/test_catalog.py compares every one).
_MAP_PROVIDERS = ("openai", "anthropic")
_CANNOT_SAY = object()


def supports_reasoning(model: str) -> bool | None:
    litellm = sys.modules.get("litellm")
    if litellm is not None:
        try:
            return bool(litellm.supports_reasoning(model=model))
        except Exception:  # an unknown model: litellm cannot say, so we do not offer it
            return False
    prices = price_map.loaded()
    return None if prices is None else map_supports_reasoning(model, prices)


def supports_vision(model: str) -> bool:
    """Whether the model takes images: litellm's answer once it is loaded, its map's before (`vision.py`)."""
    litellm = sys.modules.get("litellm")
    if litellm is not None:
        try:
            return bool(litellm.supports_vision(model=model))
        except Exception:  # an unknown model: litellm cannot say, so it takes none
            return False
    return vision.sees_images(model)


def context_window(model: str) -> int | None:
    litellm = sys.modules.get("litellm")
    if litellm is not None:
        try:
            return _window(litellm.get_model_info(model=model))
        except Exception:
            return None
    prices = price_map.loaded()
    return None if prices is None else map_context_window(model, prices)


def map_supports_reasoning(model: str, prices: PriceMap) -> bool | None:
    """litellm's answer, from its map: None where we cannot say what litellm would."""
    entry = _entry(model, prices)
    if entry is _CANNOT_SAY:
        return None
    return bool(entry and entry.get("supports_reasoning"))


def map_context_window(model: str, prices: PriceMap) -> int | None:
    entry = _entry(model, prices)
    return _window(entry) if isinstance(entry, dict) else None


def _entry(model: str, prices: PriceMap) -> Any:
    resolved = provider_and_name(model, prices)
    if resolved is None or resolved[0] not in _MAP_PROVIDERS or resolved[1].startswith("ft:"):
        return _CANNOT_SAY  # other providers' lookups, fine-tunes: litellm's rules
    return prices.info(resolved[1], resolved[0])


def _window(info: Any) -> int | None:
    size = info.get("max_input_tokens") or info.get("max_tokens")
    return int(size) if size else None
