"""A session's modes and config options (mode, model, thought level), kept in sync for the client."""

from __future__ import annotations

from collections.abc import Sequence

from ..acp.schema import ConfigOptionUpdate, CurrentModeUpdate, SelectOption, SessionConfigSelect, SessionModeState
from ..llm import catalog
from .errors import InvalidInput
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
    """Set one config option, or raise `InvalidInput` naming what is allowed."""
    if config_id == "mode":
        if value not in MODE_IDS:
            raise InvalidInput(f"Invalid params: unknown mode {value!r}; one of {', '.join(MODE_IDS)}")
        session.mode = value
    elif config_id == "model" and session.model is not None:
        allowed = model_choices(session, models)
        if value not in allowed:
            raise InvalidInput(f"Invalid params: unknown model {value!r}; one of {', '.join(allowed)}")
        session.model = value
    elif config_id == "thought_level" and reasoning:
        levels = [level.value for level in THOUGHT_LEVELS]
        if value not in levels:
            raise InvalidInput(f"Invalid params: thought_level must be one of {', '.join(levels)}")
        session.thought_level = None if value == "off" else value
    else:
        raise InvalidInput(f"Invalid params: unknown config option {config_id!r}")


class SessionConfig:
    """Each session's modes and config options: what they are, how one is chosen, and telling the client."""

    MAX_DISCOVERED = 200  # models the provider lists, offered besides the configured ones

    def __init__(self, model: str | None, models: Sequence[str]) -> None:
        self._configured: list[str] = []
        self._discovered: list[str] = []
        self.menu: list[str] = []
        self.set_models(model, models)

    def set_models(self, model: str | None, models: Sequence[str]) -> None:
        """The configured models: the model first, then the others offered (CODER_AGENT_MODELS)."""
        self._configured = [*([model] if model else []), *models]
        self._update_menu()

    def add_discovered(self, models: Sequence[str]) -> bool:
        """Offer the models the provider lists too; whether the menu changed."""
        before = list(self.menu)
        self._discovered = list(dict.fromkeys(models))[: self.MAX_DISCOVERED]
        self._update_menu()
        return self.menu != before

    def _update_menu(self) -> None:
        self.menu = list(dict.fromkeys([*self._configured, *self._discovered]))

    @staticmethod
    def reasoning(session: Session) -> bool:
        """Whether the session's model takes a reasoning effort (known once litellm is loaded)."""
        return session.model is not None and bool(catalog.supports_reasoning(session.model))

    def modes(self, session: Session) -> SessionModeState:
        return mode_state(session)

    def options(self, session: Session) -> list[SessionConfigSelect]:
        return config_options(session, self.menu, self.reasoning(session))

    def choose(self, session: Session, config_id: str, value: str) -> bool:
        """Set one option (`InvalidInput` naming what is allowed); whether the mode changed."""
        old_mode = session.mode
        apply_choice(session, config_id, value, self.menu, self.reasoning(session))
        return session.mode != old_mode

    async def announce(self, session: Session, mode_changed: bool, keep: bool = True) -> None:
        """Tell the client the current state (`keep`: store it for replay too)."""
        if mode_changed:
            await session.publish(CurrentModeUpdate(current_mode_id=session.mode), keep=keep)
        await session.publish(ConfigOptionUpdate(config_options=self.options(session)), keep=keep)
