"""A session's modes and config options as they go on the wire (camelCase JSON objects). Stdlib only.

The early `session/new` (`server.early_session`) answers with these before pydantic is imported, and the agent
(`agent.config`) builds its wire models from them: one source for both, so the two answers cannot drift.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..kit.modes import MODES

THOUGHT_LEVELS = (("off", "Off"), ("low", "Low"), ("medium", "Medium"), ("high", "High"))
THOUGHT_LEVEL_IDS = tuple(value for value, _ in THOUGHT_LEVELS)


def model_choices(menu: Sequence[str], model: str | None) -> list[str]:
    """The model menu: the configured models (the first is the default) and the session's own, once each."""
    return list(dict.fromkeys([*menu, *([model] if model else [])]))


def mode_state(mode: str) -> dict[str, Any]:
    """`SessionModeState`: the session's mode and every mode there is."""
    modes = [{"id": m.id, "name": m.name, "description": m.description} for m in MODES]
    return {"currentModeId": mode, "availableModes": modes}


def _select(option_id: str, name: str, current: str, choices: list[dict[str, str]]) -> dict[str, Any]:
    return {"type": "select", "id": option_id, "name": name, "category": option_id, "currentValue": current,
            "options": choices}  # fmt: skip


def config_options(
    mode: str, model: str | None, menu: Sequence[str], thought_level: str | None, reasoning: bool
) -> list[dict[str, Any]]:
    """`SessionConfigSelect`s: the mode; the model when there is one; the thought level when the model takes it."""
    modes = [{"value": m.id, "name": m.name, "description": m.description} for m in MODES]
    options = [_select("mode", "Mode", mode, modes)]
    if model is not None:
        models = [{"value": name, "name": name} for name in model_choices(menu, model)]
        options.append(_select("model", "Model", model, models))
    if reasoning:
        levels = [{"value": value, "name": name} for value, name in THOUGHT_LEVELS]
        options.append(_select("thought_level", "Thinking", thought_level or "off", levels))
    return options
