"""The ACP methods that are not about a session's life: initialize, prompt, cancel, modes and config options."""

from __future__ import annotations

import logging
from typing import Any

import anyio
from pydantic import ValidationError

from ..acp.errors import RequestError
from ..acp.router import Router
from ..acp.schema import (
    Empty,
    InitializeRequest,
    PromptRequest,
    PromptResponse,
    SessionIdParams,
    SetConfigOptionRequest,
    SetConfigOptionResponse,
    SetSessionModeRequest,
)
from ..agent.sessions.session import Session
from ..config.settings import Settings
from ..prestart.capabilities import PROTOCOL_VERSION, initialize_result, model_sees_images
from .errors import mapped
from .login import Login
from .state import AgentState

log = logging.getLogger(__name__)


def _takes_images(settings: Settings) -> bool:
    """What the user said of the model (`CODER_AGENT_IMAGES`), else what litellm's map says."""
    return settings.images if settings.images is not None else model_sees_images(settings.model)


class Handlers:
    def __init__(self, state: AgentState) -> None:
        self._state = state
        self._login = Login(state)

    def register(self, router: Router) -> None:
        self._login.register(router)
        router.on_request("initialize", InitializeRequest, self.initialize)
        router.on_request("session/prompt", PromptRequest, mapped(self.prompt))
        router.on_request("session/set_mode", SetSessionModeRequest, mapped(self.set_mode))
        router.on_request("session/set_config_option", SetConfigOptionRequest, mapped(self.set_config_option))
        router.on_notification("session/cancel", SessionIdParams, self.cancel)

    async def initialize(self, params: InitializeRequest) -> dict[str, Any]:
        self._state.set_client_capabilities(params.client_capabilities)
        if params.protocol_version != PROTOCOL_VERSION:
            log.info("client asked for protocol %s; we speak %s", params.protocol_version, PROTOCOL_VERSION)
        return initialize_result(
            params.client_capabilities.wire(),
            image=_takes_images(self._state.settings),
            logout=not self._state.remote,
        )

    def adopt_initialize(self, params: dict[str, Any]) -> None:
        """Take in an `initialize` that was answered before the runtime started (see `prestart.early`)."""
        try:
            request = InitializeRequest.model_validate(params)
        except ValidationError as exc:
            # The reply is out already; unusable capabilities count as none, as the schema's defaults say.
            log.warning("ignoring unusable client capabilities: %s", exc)
            request = InitializeRequest(protocol_version=PROTOCOL_VERSION)
        self._state.set_client_capabilities(request.client_capabilities)

    async def prompt(self, params: PromptRequest) -> PromptResponse:
        session = self._state.sessions.get(params.session_id)
        early = self._state.early_reply
        first = early is not None and early.is_first_prompt(session.id)  # asked before any wait: see there
        if early is not None and not first:
            await early.wait_kept(session.id)
        await self._login.require(session)  # -32000 without a model or its key: the client offers the login
        await self._state.mcp.settle_project(session)  # the project's .mcp.json, if the user was not asked yet
        before = len(session.history)
        try:
            stop_reason = await self._state.turns.prompt(session, params.prompt)
        finally:
            if early is not None and first:
                if early.keep_unread(session, params.prompt, before):
                    # the early call sent it (a plain prompt, never a command): it reached the model
                    with anyio.CancelScope(shield=True):
                        await self._state.turns.name_after(session, params.prompt)
                    self._state.sessions.save(session)
                early.kept.set()
        return PromptResponse(stop_reason=stop_reason)

    async def cancel(self, params: SessionIdParams) -> None:
        self._state.turns.cancel(params.session_id)

    async def set_mode(self, params: SetSessionModeRequest) -> Empty:
        await self._choose(params.session_id, "mode", params.mode_id, announce_mode=True)
        return Empty()

    async def set_config_option(self, params: SetConfigOptionRequest) -> SetConfigOptionResponse:
        if not isinstance(params.value, str):
            raise RequestError.invalid_params(f"Invalid params: {params.config_id} takes one of its listed values")
        session = await self._choose(params.session_id, params.config_id, params.value, announce_mode=False)
        return SetConfigOptionResponse(config_options=self._state.config.options(session))

    async def _choose(self, session_id: str, config_id: str, value: str, announce_mode: bool) -> Session:
        state = self._state
        session = state.sessions.get(session_id)
        mode_changed = state.config.choose(session, config_id, value)
        state.sessions.save(session)
        if config_id == "model":
            state.preload.start(session.model, state.settings)
        await state.config.announce(session, mode_changed=mode_changed or announce_mode)
        return session
