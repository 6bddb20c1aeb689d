"""What the agent knows about a model (reasoning, images, context window): litellm's model map, one lookup.

The answers come from `wire/model_info.py` on every path and at every moment of a session (before the runtime is in
and after, for the wires the agent speaks and for litellm's providers alike), so an option offered in the
`session/new` answer is never taken back or added later. The first answer for a model reads its entries from the
map (~1 ms); the rest are remembered.
"""

from __future__ import annotations

from .wire import model_info


def supports_reasoning(model: str) -> bool:
    return model_info.info(model).supports_reasoning


def supports_vision(model: str) -> bool:
    return model_info.info(model).supports_vision


def context_window(model: str) -> int | None:
    return model_info.info(model).context_window
