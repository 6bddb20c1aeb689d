"""`authenticate`, `logout`, and the check a prompt makes: is there a model, and a usable key for it?

The terminal login (`coder-agent login`, run by the client in a terminal or by the user in a shell) saves a key
in the user's config folder and picks the model; the client then starts the agent again. The `saved-login`
method is for clients that cannot run a terminal: `authenticate` reads the user's files again and succeeds when
they now give a model and its key. `logout` forgets the saved keys (the keys the editor's configuration sets
in the agent's environment are the editor's: they stay); the remote clients of `coder-agent serve` are refused it
(the saved keys are the server operator's, not theirs to remove). A prompt without a model or without its key is
refused with -32000 (auth required), so that the client offers the login.
"""

from __future__ import annotations

import logging

from ..acp.errors import METHOD_NOT_FOUND, RequestError
from ..acp.router import Router
from ..acp.schema import AuthenticateRequest, Empty
from ..agent.errors import AuthRequired, InvalidInput
from ..agent.sessions.session import Session
from ..config.keystore import KeyStore
from ..llm.wire.usable import NO_MODEL_MESSAGE, missing_key, missing_key_message
from ..prestart.capabilities import SAVED_LOGIN_ID, TERMINAL_LOGIN_ID
from .errors import mapped
from .state import AgentState

log = logging.getLogger(__name__)


class Login:
    def __init__(self, state: AgentState) -> None:
        self._state = state

    def register(self, router: Router) -> None:
        router.on_request("authenticate", AuthenticateRequest, mapped(self.authenticate))
        router.on_request("logout", Empty, mapped(self.logout))

    def _reload(self) -> None:
        state = self._state
        state.settings = state.settings.reload()
        state.config.set_models(state.settings.model, state.settings.models)
        for notice in state.settings.notices:
            log.warning("%s", notice)

    def problem(self, model: str | None) -> AuthRequired | None:
        """Why a prompt to `model` cannot be sent (no model, or surely no key for it); None when it can."""
        settings = self._state.settings
        if model is None:
            return AuthRequired(NO_MODEL_MESSAGE, {"setting": "CODER_AGENT_MODEL"})
        variable = missing_key(model, settings.api_base, settings.api_key, settings.environ)
        if variable is not None:
            return AuthRequired(missing_key_message(model, variable), {"setting": variable})
        return None

    async def authenticate(self, params: AuthenticateRequest) -> Empty:
        if params.method_id == TERMINAL_LOGIN_ID:
            raise InvalidInput(
                f"Invalid params: {TERMINAL_LOGIN_ID} runs in a terminal (the client starts the agent's command "
                "with its args); it is never passed to authenticate"
            )
        if params.method_id != SAVED_LOGIN_ID:
            raise InvalidInput(
                f"Invalid params: unknown auth method {params.method_id!r}; one of {SAVED_LOGIN_ID}, "
                f"{TERMINAL_LOGIN_ID}"
            )
        self._reload()
        problem = self.problem(self._state.settings.model)
        if problem is not None:
            raise problem
        log.info("authenticated: model %s", self._state.settings.model)
        return Empty()

    async def logout(self, params: Empty) -> Empty:
        if self._state.remote:
            raise RequestError(
                METHOD_NOT_FOUND,
                "logout is not offered to remote clients: the saved keys belong to the server's operator "
                "(who runs `coder-agent logout` on the server)",
                {"method": "logout"},
            )
        settings = self._state.settings
        removed = KeyStore(settings.config_dir).remove() if settings.config_dir is not None else []
        self._reload()
        log.info("logged out: removed the saved keys %s", ", ".join(removed) or "(none were saved)")
        return Empty()

    async def require(self, session: Session) -> None:
        """Raise `AuthRequired` unless the session has a model with a usable key (taking the login's model).

        Before refusing, the user's files are read again: they may have run `coder-agent login` in another
        terminal since, and the editor (which knows nothing of it) should not have to start the agent again."""
        problem = await self._problem_of(session)
        if problem is not None:
            self._reload()
            problem = await self._problem_of(session)
        if problem is not None:
            raise problem

    async def _problem_of(self, session: Session) -> AuthRequired | None:
        settings = self._state.settings
        if session.model is None and settings.model is not None:
            session.model = settings.model  # logged in since the session began
            self._state.sessions.save(session)
            await self._state.config.announce(session, mode_changed=False)
        return self.problem(session.model)
