"""The editor's model menu: the configured models, plus those the provider lists where it can be asked.

The list is asked for in the background once a session exists (never delaying `session/new`), at most once
per model and server, within `LIST_TIMEOUT`; when it arrives, every live session gets a `config_option_update`.
A failure changes nothing in the menu and is logged.
"""

from __future__ import annotations

import logging

from ..agent.errors import ClientError
from .state import AgentState

log = logging.getLogger(__name__)


class ModelMenu:
    def __init__(self, state: AgentState) -> None:
        self._state = state
        self._asked: set[tuple[str, str | None]] = set()

    def refresh(self) -> None:
        """Ask the provider for its models in the background, unless it was asked for these settings already."""
        settings = self._state.settings
        if settings.model is None or (settings.model, settings.api_base) in self._asked:
            return
        self._asked.add((settings.model, settings.api_base))
        self._state.background.start_soon(self._fetch, name="model list")

    async def _fetch(self) -> None:
        from ..llm.model_list import ModelListError, list_models
        from ..llm.wire.usable import request_key

        settings = self._state.settings
        model = settings.model
        if model is None:
            return
        key = request_key(model, settings.api_base, settings.api_key, settings.environ)
        try:
            models = await list_models(model, settings.api_base, key, settings.environ)
        except ModelListError as exc:
            log.info("the model menu lists only the configured models: %s", exc)
            return
        if not models or not self._state.config.add_discovered(models):
            return
        log.info("the model menu now offers %d models the provider lists", len(models))
        for session in list(self._state.sessions.live.values()):
            if session.model is None:
                continue
            try:
                await self._state.config.announce(session, mode_changed=False, keep=False)
            except ClientError as exc:
                log.info("could not update the model menu of %s: %s", session.id, exc.message)
