"""A session's modes and config options (mode, model, thought level), kept in sync for the client."""

from __future__ import annotations

from collections.abc import Sequence

from ..acp.errors import RequestError
from ..acp.schema import SelectOption, SessionConfigSelect, SessionModeState
from .permissions import MODE_IDS, MODES
from .session import Session

THOUGHT_LEVELS = [
    SelectOption(value="off", name="Off"),
    SelectOption(value="low", name="Low"),
    SelectOption(value="medium", name="Medium"),
    SelectOption(value="high", name="High"),
]


def mode_state(session: Session) -> SessionModeState:
    return SessionModeState(current_mode_id=session.mode, available_modes=MODES)


def model_choices(session: Session, models: Sequence[str]) -> list[str]:
    """The model menu: the configured models (the first is the default) and the session's own, once each."""
    return list(dict.fromkeys([*models, *([session.model] if session.model else [])]))


def config_options(session: Session, models: Sequence[str], reasoning: bool) -> list[SessionConfigSelect]:
    options = [
        SessionConfigSelect(
            id="mode",
            name="Mode",
            category="mode",
            current_value=session.mode,
            options=[SelectOption(value=m.id, name=m.name, description=m.description) for m in MODES],
        )
    ]
    if session.model is not None:
        choices = model_choices(session, models)
        options.append(
            SessionConfigSelect(
                id="model",
                name="Model",
                category="model",
                current_value=session.model,
                options=[SelectOption(value=name, name=name) for name in choices],
            )
        )
    if reasoning:
        options.append(
            SessionConfigSelect(
                id="thought_level",
                name="Thinking",
                category="thought_level",
                current_value=session.thought_level or "off",
                options=THOUGHT_LEVELS,
            )
        )
    return options


def apply_choice(session: Session, config_id: str, value: str, models: Sequence[str], reasoning: bool) -> None:
    """Set one config option, or raise -32602 naming what is allowed."""
    if config_id == "mode":
        if value not in MODE_IDS:
            raise RequestError.invalid_params(f"Invalid params: unknown mode {value!r}; one of {', '.join(MODE_IDS)}")
        session.mode = value
    elif config_id == "model" and session.model is not None:
        allowed = model_choices(session, models)
        if value not in allowed:
            raise RequestError.invalid_params(f"Invalid params: unknown model {value!r}; one of {', '.join(allowed)}")
        session.model = value
    elif config_id == "thought_level" and reasoning:
        levels = [level.value for level in THOUGHT_LEVELS]
        if value not in levels:
            raise RequestError.invalid_params(f"Invalid params: thought_level must be one of {', '.join(levels)}")
        session.thought_level = None if value == "off" else value
    else:
        raise RequestError.invalid_params(f"Invalid params: unknown config option {config_id!r}")
