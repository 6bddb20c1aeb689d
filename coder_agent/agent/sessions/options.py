"""A session's modes and config options (mode, model, thought level), kept in sync for the client."""

from __future__ import annotations

from collections.abc import Sequence

from ...acp.schema import ConfigOptionUpdate, CurrentModeUpdate, SessionConfigSelect, SessionModeState
from ...llm import catalog
from ...prestart import session_options
from ..errors import InvalidInput
from ..permissions.gate import MODE_IDS
from .session import Session


def mode_state(session: Session) -> SessionModeState:
    return SessionModeState.model_validate(session_options.mode_state(session.mode))


def config_options(session: Session, models: Sequence[str], reasoning: bool) -> list[SessionConfigSelect]:
    options = session_options.config_options(session.mode, session.model, models, session.thought_level, reasoning)
    return [SessionConfigSelect.model_validate(option) for option in options]


def apply_choice(session: Session, config_id: str, value: str, models: Sequence[str], reasoning: bool) -> None:
    """Set one config option, or raise `InvalidInput` naming what is allowed."""
    if config_id == "mode":
        if value not in MODE_IDS:
            raise InvalidInput(f"Invalid params: unknown mode {value!r}; one of {', '.join(MODE_IDS)}")
        session.mode = value
    elif config_id == "model" and session.model is not None:
        allowed = session_options.model_choices(models, session.model)
        if value not in allowed:
            raise InvalidInput(f"Invalid params: unknown model {value!r}; one of {', '.join(allowed)}")
        session.model = value
    elif config_id == "thought_level" and reasoning:
        levels = session_options.THOUGHT_LEVEL_IDS
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
