"""`authenticate`, `logout`, and the check a prompt makes: is there a model, and a usable key for it?

The terminal login (`coder-agent login`, run by the client in a terminal or by the user in a shell) saves a key
in the user's config folder and picks the model; the client then starts the agent again. The `form-login`
method is for clients that render forms but cannot run a terminal: `authenticate` asks in one
(`login_form.py`), saves the answer the same way, and the session then works. The `saved-login` method reads
the user's files again and succeeds when they now give a model and its key; with nothing usable saved, a client
that renders forms is asked too. `logout` forgets the saved keys (the keys the editor's configuration sets
in the agent's environment are the editor's: they stay); the remote clients of `coder-agent serve` are refused it
(the saved keys are the server operator's, not theirs to remove). A prompt without a model or without its key is
refused with -32000 (auth required), so that the client offers the login.
"""

from __future__ import annotations

import logging

import anyio

from ..acp.errors import METHOD_NOT_FOUND, RequestError
from ..acp.jsonrpc import current_request_id
from ..acp.router import Router
from ..acp.schema import AuthenticateRequest, Empty
from ..agent.errors import AuthRequired, InvalidInput
from ..agent.sessions.session import Session
from ..config.keystore import KeyStore
from ..config.logins import save_login
from ..llm.wire.usable import NO_MODEL_MESSAGE, missing_key, missing_key_message
from ..prestart.capabilities import FORM_LOGIN_ID, SAVED_LOGIN_ID, TERMINAL_LOGIN_ID
from .errors import mapped
from .login_form import ask_login
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
        if params.method_id not in (SAVED_LOGIN_ID, FORM_LOGIN_ID):
            raise InvalidInput(
                f"Invalid params: unknown auth method {params.method_id!r}; one of {FORM_LOGIN_ID}, "
                f"{SAVED_LOGIN_ID}, {TERMINAL_LOGIN_ID}"
            )
        if params.method_id == FORM_LOGIN_ID:
            await self._form_login()
        else:
            self._reload()
            if self.problem(self._state.settings.model) is not None and self._can_ask():
                await self._form_login()  # nothing usable is saved yet: log in now, where the client can ask
        problem = self.problem(self._state.settings.model)
        if problem is not None:
            raise problem
        log.info("authenticated: model %s", self._state.settings.model)
        return Empty()

    def _can_ask(self) -> bool:
        state = self._state
        return not state.remote and "form" in state.client.elicitation_modes() and current_request_id() is not None

    async def _form_login(self) -> None:
        """Ask for a login in a form tied to this `authenticate` request, and save it (`login_form.py`)."""
        state = self._state
        if state.remote:
            raise InvalidInput(f"Invalid params: {FORM_LOGIN_ID} is not offered to remote clients")
        request_id = current_request_id()
        if "form" not in state.client.elicitation_modes() or request_id is None:
            raise InvalidInput(
                f"Invalid params: {FORM_LOGIN_ID} asks in a form, and this client offers none (elicitation.form)"
            )
        if state.settings.config_dir is None:
            raise AuthRequired("No config folder to save a login in: set HOME or XDG_CONFIG_HOME.")
        choice = await ask_login(state.client, request_id)
        config_dir = state.settings.config_dir
        try:  # a keyring may take its time: not on the event loop
            place = await anyio.to_thread.run_sync(save_login, config_dir, choice)
        except (OSError, ValueError) as exc:
            raise AuthRequired(f"The login could not be saved: {exc}") from exc
        log.info("logged in through the client's form: model %s, key in %s", choice.model, place)
        self._reload()

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
