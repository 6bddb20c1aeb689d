"""What litellm knows about a model (reasoning support, context window), once litellm is loaded.

Every answer is None while litellm is not imported yet: asking must never pull it onto a fast path.
"""

from __future__ import annotations

import logging
import sys

log = logging.getLogger(__name__)


def _litellm() -> object | None:
    return sys.modules.get("litellm") if "litellm" in sys.modules else None


def supports_reasoning(model: str) -> bool | None:
    litellm = _litellm()
    if litellm is None:
        return None
    try:
        return bool(litellm.supports_reasoning(model=model))  # type: ignore[attr-defined]
    except Exception:  # an unknown model: litellm cannot say, so we do not offer it
        return False


def context_window(model: str) -> int | None:
    litellm = _litellm()
    if litellm is None:
        return None
    try:
        info = litellm.get_model_info(model=model)  # type: ignore[attr-defined]
    except Exception:
        return None
    size = info.get("max_input_tokens") or info.get("max_tokens")
    return int(size) if size else None
