"""The agent side of ACP: one small handler per method, registered on a `Router`."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import anyio
import anyio.abc
from pydantic import ValidationError

from ..acp.errors import INTERNAL_ERROR, ConnectionClosed, RequestError
from ..acp.router import Router
from ..acp.schema import (
    AgentMessageChunk,
    ClientCapabilities,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    Empty,
    InitializeRequest,
    McpServer,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    SessionIdParams,
    SessionInfoUpdate,
    SessionStateResponse,
    SetConfigOptionRequest,
    SetConfigOptionResponse,
    SetSessionModeRequest,
    TextContent,
    UserMessageChunk,
)
from ..llm import catalog
from ..llm.base import Model, ModelError
from ..llm.loader import load_litellm
from ..mcp import McpServers
from .capabilities import PROTOCOL_VERSION, initialize_result
from .client import Client
from .config import apply_choice, config_options, mode_state
from .context import user_message_from_prompt
from .environment import system_prompt
from .session import LastTurn, Session, new_id
from .session_methods import SessionMethods, require_absolute
from .sessions import Sessions, now
from .titles import title_from_prompt
from .tools.base import Tool
from .turn import run_turn

log = logging.getLogger(__name__)

NO_MODEL_MESSAGE = (
    "No model is configured. Set CODER_AGENT_MODEL to a litellm model string "
    "(for example anthropic/claude-sonnet-4-5, openai/gpt-4o or ollama/qwen2.5-coder), and give its key in "
    "CODER_AGENT_API_KEY or the provider's own variable (ANTHROPIC_API_KEY, OPENAI_API_KEY, ...). "
    "For an OpenAI-compatible server also set CODER_AGENT_API_BASE."
)

ModelFactory = Callable[[str, str | None], Model]
"""(litellm model string, reasoning effort or None) -> a Model."""


@dataclass(frozen=True)
class AgentOptions:
    model: str | None = None
    models: Sequence[str] = field(default_factory=list)
    default_mode: str = "default"
    max_turn_requests: int = 100
    mcp_connect_timeout: float = 30.0
    mcp_call_timeout: float = 120.0


class AcpAgent:
    def __init__(
        self,
        client: Client,
        set_client_capabilities: Callable[[ClientCapabilities], None],
        options: AgentOptions,
        model_factory: ModelFactory,
        tools: Sequence[Tool[Any]],
        sessions: Sessions,
        background: anyio.abc.TaskGroup,
    ) -> None:
        self._client = client
        self._set_client_capabilities = set_client_capabilities
        self._options = options
        self._model_factory = model_factory
        self._tools = {tool.name: tool for tool in tools}
        self._sessions = sessions
        self._background = background
        self._preloading = False
        # The model menu: the configured model first, then the others offered (CODER_AGENT_MODELS).
        self._models = list(dict.fromkeys([*([options.model] if options.model else []), *options.models]))

    def register(self, router: Router) -> None:
        router.on_request("initialize", InitializeRequest, self.initialize)
        router.on_request("session/new", NewSessionRequest, self.new_session)
        router.on_request("session/prompt", PromptRequest, self.prompt)
        router.on_request("session/set_mode", SetSessionModeRequest, self.set_mode)
        router.on_request("session/set_config_option", SetConfigOptionRequest, self.set_config_option)
        router.on_notification("session/cancel", SessionIdParams, self.cancel)
        SessionMethods(self._sessions, self.state_of, self.announce_state, self.attach_mcp).register(router)

    def _session(self, session_id: str) -> Session:
        return self._sessions.get(session_id)

    def state_of(self, session: Session) -> SessionStateResponse:
        return SessionStateResponse(modes=mode_state(session), config_options=self._config_options(session))

    async def announce_state(self, session: Session) -> None:
        """After a replay: the current mode and config (sent, not stored again)."""
        await self._announce_config(session, mode_changed=True, keep=False)

    # ---- initialize -------------------------------------------------------------------------------

    async def initialize(self, params: InitializeRequest) -> dict[str, Any]:
        self._set_client_capabilities(params.client_capabilities)
        if params.protocol_version != PROTOCOL_VERSION:
            log.info("client asked for protocol %s; we speak %s", params.protocol_version, PROTOCOL_VERSION)
        return initialize_result()

    def adopt_initialize(self, params: dict[str, Any]) -> None:
        """Take in an `initialize` that was answered before the runtime started (see `acp.early`)."""
        try:
            request = InitializeRequest.model_validate(params)
        except ValidationError as exc:
            # The reply is out already; unusable capabilities count as none, as the schema's defaults say.
            log.warning("ignoring unusable client capabilities: %s", exc)
            request = InitializeRequest(protocol_version=PROTOCOL_VERSION)
        self._set_client_capabilities(request.client_capabilities)

    # ---- sessions ---------------------------------------------------------------------------------

    async def new_session(self, params: NewSessionRequest) -> NewSessionResponse:
        require_absolute("cwd", params.cwd)
        for directory in params.additional_directories:
            require_absolute("additionalDirectories[]", directory)
        session = self._sessions.create(
            params.cwd, params.additional_directories, self._options.default_mode, self._options.model
        )
        await self.attach_mcp(session, params.mcp_servers)
        self._start_preload()
        return NewSessionResponse(
            session_id=session.id, modes=mode_state(session), config_options=self._config_options(session)
        )

    async def attach_mcp(self, session: Session, servers: Sequence[McpServer]) -> None:
        """Connect the session's MCP servers in the background: nobody waits for them here."""
        if session.mcp is not None:
            old, session.mcp = session.mcp, None
            await old.close()
        if not servers:
            return

        async def report(message: str) -> None:
            notice = AgentMessageChunk(content=TextContent(text=message), message_id=new_id("notice"))
            await session.publish(notice, keep=False)

        session.mcp = McpServers(
            servers,
            connect_timeout=self._options.mcp_connect_timeout,
            call_timeout=self._options.mcp_call_timeout,
            report=report,
        )
        self._background.start_soon(session.mcp.run)

    def _tools_for(self, session: Session) -> dict[str, Tool[Any]]:
        if session.mcp is None:
            return self._tools
        return {**self._tools, **{tool.name: tool for tool in session.mcp.tools()}}

    def _reasoning(self, session: Session) -> bool:
        return session.model is not None and bool(catalog.supports_reasoning(session.model))

    def _config_options(self, session: Session) -> list[Any]:
        return list(config_options(session, self._models, self._reasoning(session)))

    def _start_preload(self) -> None:
        """Import litellm in the background once a session exists, so the first prompt does not wait for it."""
        if self._options.model is not None and not self._preloading:
            self._preloading = True
            self._background.start_soon(self._preload)

    async def _preload(self) -> None:
        await load_litellm()
        # Only now can litellm say which models take a reasoning effort: offer the option where they do.
        for session in list(self._sessions.live.values()):
            if self._reasoning(session):
                await self._announce_config(session, mode_changed=False)

    async def _announce_config(self, session: Session, mode_changed: bool, keep: bool = True) -> None:
        if mode_changed:
            await session.publish(CurrentModeUpdate(current_mode_id=session.mode), keep=keep)
        await session.publish(ConfigOptionUpdate(config_options=self._config_options(session)), keep=keep)

    async def set_mode(self, params: SetSessionModeRequest) -> Empty:
        session = self._session(params.session_id)
        self._choose(session, "mode", params.mode_id)
        await self._announce_config(session, mode_changed=True)
        return Empty()

    async def set_config_option(self, params: SetConfigOptionRequest) -> SetConfigOptionResponse:
        session = self._session(params.session_id)
        if not isinstance(params.value, str):
            raise RequestError.invalid_params(f"Invalid params: {params.config_id} takes one of its listed values")
        old_mode = session.mode
        self._choose(session, params.config_id, params.value)
        await self._announce_config(session, mode_changed=session.mode != old_mode)
        return SetConfigOptionResponse(config_options=self._config_options(session))

    def _choose(self, session: Session, config_id: str, value: str) -> None:
        apply_choice(session, config_id, value, self._models, self._reasoning(session))
        self._sessions.save(session)

    # ---- prompt turns -----------------------------------------------------------------------------

    async def prompt(self, params: PromptRequest) -> PromptResponse:
        session = self._session(params.session_id)
        if session.model is None:
            raise RequestError(INTERNAL_ERROR, NO_MODEL_MESSAGE, {"setting": "CODER_AGENT_MODEL"})
        await self._wait_for_cancelled_turn(session)
        model = self._model_factory(session.model, session.thought_level)
        ended = LastTurn("error", "the turn stopped unexpectedly")
        with anyio.CancelScope() as scope:
            session.turn_scope = scope
            session.turn_done = anyio.Event()
            try:
                if not session.system_prompt:
                    session.system_prompt = await system_prompt(session.cwd, session.additional_directories)
                user = await user_message_from_prompt(params.prompt, self._client, session.id)
                message_id = new_id("user")
                for block in params.prompt:  # the editor shows the prompt already; keep it for replay
                    session.transcript_keep(UserMessageChunk(content=block, message_id=message_id))
                if session.mcp is not None:
                    await session.mcp.wait_ready(self._options.mcp_connect_timeout)
                stop_reason = await run_turn(
                    session, user, model, self._client, self._tools_for(session), self._options.max_turn_requests
                )
                ended = LastTurn(stop_reason)
            except ModelError as exc:
                ended = LastTurn("error", exc.message)
                raise RequestError(
                    INTERNAL_ERROR, exc.message, {"retryable": exc.retryable, "status": exc.status}
                ) from exc
            except RequestError as exc:
                ended = LastTurn("error", exc.message)
                raise
            finally:
                if scope.cancel_called:
                    ended = LastTurn("cancelled")
                session.last_turn = replace(ended, at=now())
                session.turn_scope = None
                session.turn_done.set()
                with anyio.CancelScope(shield=True):
                    await self._after_turn(session, params)
        if scope.cancelled_caught:
            return PromptResponse(stop_reason="cancelled")
        return PromptResponse(stop_reason=stop_reason)

    @staticmethod
    async def _wait_for_cancelled_turn(session: Session) -> None:
        """One turn at a time: a new prompt may follow a cancel before that turn has finished cleaning up."""
        scope = session.turn_scope
        if scope is None:
            return
        if not scope.cancel_called:
            raise RequestError.invalid_params("Invalid params: a prompt is already running in this session")
        with anyio.move_on_after(10):
            await session.turn_done.wait()
        if session.turn_scope is not None:
            raise RequestError.invalid_params("Invalid params: the cancelled prompt is still stopping; try again")

    async def _after_turn(self, session: Session, params: PromptRequest) -> None:
        """Name the session after its first exchange, and save its state."""
        if session.title is None:
            title = title_from_prompt(params.prompt)
            if title:
                session.title = title
                try:
                    await session.publish(SessionInfoUpdate(title=title, updated_at=now()))
                except ConnectionClosed:
                    log.info("could not send the title of %s: the client is gone", session.id)
        self._sessions.save(session)

    async def cancel(self, params: SessionIdParams) -> None:
        session = self._sessions.live.get(params.session_id)
        if session is not None:
            session.cancel_turn()
