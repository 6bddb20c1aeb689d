"""The ACP methods of a session's life: new, load (with replay), resume, list, close, delete, fork."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio

from ..acp.jsonrpc import after_reply
from ..acp.router import Router
from ..acp.schema import (
    AvailableCommand,
    AvailableCommandsUpdate,
    Empty,
    ForkSessionResponse,
    ListSessionsRequest,
    ListSessionsResponse,
    LoadSessionRequest,
    McpServer,
    NewSessionRequest,
    NewSessionResponse,
    ResumeSessionRequest,
    SessionIdParams,
    SessionInfo,
    SessionStateResponse,
)
from ..agent.errors import ClientError
from ..agent.sessions.options import first_thought_level
from ..agent.sessions.session import Session
from ..prestart.early_session import EarlySession
from .errors import mapped, require_absolute
from .model_menu import ModelMenu
from .state import AgentState

log = logging.getLogger(__name__)


def _list_meta(last_turn: object) -> dict[str, Any] | None:
    """How the session's last turn ended, for clients that show it (`_meta`, as the spec reserves it for us)."""
    if not isinstance(last_turn, dict):
        return None
    return {"coder-agent": {"lastTurn": {k: v for k, v in last_turn.items() if k in ("stop_reason", "error", "at")}}}


def _servers(named: list[dict[str, Any]]) -> list[McpServer]:
    """The MCP servers an early `session/new` named, as the request's model reads them (the early stage took only
    entries it reads the same)."""
    if not named:
        return []
    from pydantic import TypeAdapter

    return TypeAdapter(list[McpServer]).validate_python(named, by_alias=True)


def _require_roots(cwd: str, directories: Sequence[str] | None) -> None:
    require_absolute("cwd", cwd)
    for directory in directories or ():
        require_absolute("additionalDirectories[]", directory)


class SessionHandlers:
    def __init__(self, state: AgentState) -> None:
        self._state = state
        self._menu = ModelMenu(state)
        self._sent_commands: dict[str, list[AvailableCommand]] = {}  # session -> the commands it was last sent

    def register(self, router: Router) -> None:
        router.on_request("session/new", NewSessionRequest, mapped(self.new))
        router.on_request("session/load", LoadSessionRequest, mapped(self.load))
        router.on_request("session/resume", ResumeSessionRequest, mapped(self.resume))
        router.on_request("session/list", ListSessionsRequest, mapped(self.list))
        router.on_request("session/close", SessionIdParams, mapped(self.close))
        router.on_request("session/delete", SessionIdParams, mapped(self.delete))
        router.on_request("session/fork", ResumeSessionRequest, mapped(self.fork))  # unstable in v1

    async def new(self, params: NewSessionRequest) -> NewSessionResponse:
        _require_roots(params.cwd, params.additional_directories)
        settings = self._state.settings
        session = self._state.sessions.create(
            params.cwd, params.additional_directories, settings.default_mode, settings.model
        )
        session.thought_level = first_thought_level(session.model, settings.thought_level)
        await self._state.mcp.attach(session, params.mcp_servers, self._announce_after_reply(session))
        self._preload(session)
        self._menu.refresh()
        state = self._state.state_of(session)
        return NewSessionResponse(session_id=session.id, modes=state.modes, config_options=state.config_options)

    async def adopt(self, early: EarlySession) -> None:
        """Take over a session whose `session/new` was answered before the runtime started (`early_session`):
        made and saved under its id, its MCP servers started, its slash commands sent, as `new` does. The client
        has its id already: whatever fails after the session exists is logged, and the session serves."""
        session = self._state.sessions.create(
            early.cwd, early.additional_directories, early.mode, early.model, session_id=early.id
        )
        session.thought_level = early.thought_level
        if early.system_prompt is not None:  # the early first call was sent with it: the turn's must match
            session.system_prompt = early.system_prompt
        try:
            servers = _servers(early.mcp_servers)
            await self._state.mcp.attach(session, servers, self._announce_after_reply(session))
            self._preload(session)
            self._menu.refresh()
            state = self._state.state_of(session).wire()
            if state["modes"] != early.result["modes"] or state["configOptions"] != early.result["configOptions"]:
                log.warning("%s: the early session/new answer was not the agent's; sending the agent's", session.id)
                await self._state.config.announce(session, mode_changed=True)
            if early.commands is not None:  # announced early: sent again only if the agent's list differs
                self._sent_commands[session.id] = [AvailableCommand.model_validate(c) for c in early.commands]
            await self._announce_commands(session, changed_only=early.commands is not None)
        except Exception:
            log.exception("taking over %s, made by the early session/new, did not finish", session.id)
            return
        log.info("took over %s, made by the early session/new", session.id)

    async def _restore(
        self, params: LoadSessionRequest | ResumeSessionRequest, announced: anyio.Event | None = None
    ) -> Session:
        """The stored session brought back, its MCP servers started; its commands are sent after the reply, or,
        given `announced`, by the caller before it (the event set once they are)."""
        _require_roots(params.cwd, params.additional_directories)
        await self._state.sessions.wait_released(params.session_id)
        session = self._state.sessions.restore(params.session_id, params.cwd, params.additional_directories)
        prompts_ready = (
            self._announce_after_reply(session) if announced is None else self._announce_changes(session, announced)
        )
        await self._state.mcp.attach(session, params.mcp_servers, prompts_ready)
        self._preload(session)
        self._menu.refresh()
        return session

    def _announce_after_reply(self, session: Session) -> Callable[[], Awaitable[None]]:
        """Send the session's slash commands once the reply is out (new, resume, fork: the client learns the id
        from the reply or expects no update before it; a JetBrains client hangs on them before it). The function
        returned announces them again when the MCP servers' prompts come, after the reply."""
        replied = anyio.Event()

        async def announce() -> None:
            replied.set()
            await self._announce_commands(session)

        if not after_reply(announce):  # called directly (the headless run): there is no reply to wait for
            replied.set()
        return self._announce_changes(session, replied)

    def _announce_changes(self, session: Session, announced: anyio.Event) -> Callable[[], Awaitable[None]]:
        """Once the MCP servers are up: their prompts are new commands, announced then (ACP: "available commands
        are ready or have changed", at any time), after the first announcement and only if the list changed."""

        async def prompts_ready() -> None:
            await announced.wait()
            await self._announce_commands(session, changed_only=True)

        return prompts_ready

    async def _announce_commands(self, session: Session, changed_only: bool = False) -> None:
        if self._state.sessions.live.get(session.id) is not session:
            return  # closed or deleted meanwhile
        commands = await self._state.turns.commands.available(session)
        if changed_only and self._sent_commands.get(session.id) == commands:
            return
        self._sent_commands[session.id] = commands
        try:
            await session.publish(AvailableCommandsUpdate(available_commands=commands), keep=False)
        except ClientError as exc:
            log.info("could not send the commands of %s: %s", session.id, exc.message)

    async def load(self, params: LoadSessionRequest) -> SessionStateResponse:
        """Replay, then everything a load announces, then the reply: no update may follow it (the client carries
        on from the reply as if nothing happened; the official TCK's ACP-LOAD-002)."""
        announced = anyio.Event()
        session = await self._restore(params, announced)
        count = await self._state.sessions.replay(session)
        await self._state.config.announce(session, mode_changed=True, keep=False)  # sent, not stored again
        await self._announce_commands(session)
        announced.set()
        log.info("loaded %s: replayed %d updates", session.id, count)
        return self._state.state_of(session)

    async def resume(self, params: ResumeSessionRequest) -> SessionStateResponse:
        return self._state.state_of(await self._restore(params))

    async def list(self, params: ListSessionsRequest) -> ListSessionsResponse:
        records, next_cursor = self._state.sessions.list(params.cwd, params.cursor)
        infos = [
            SessionInfo(
                session_id=record.id,
                cwd=record.cwd,
                additional_directories=record.additional_directories or None,
                title=record.title,
                updated_at=record.updated_at,
                _meta=_list_meta(record.state.get("last_turn")),
            )
            for record in records
        ]
        return ListSessionsResponse(sessions=infos, next_cursor=next_cursor)

    async def close(self, params: SessionIdParams) -> Empty:
        await self._state.sessions.close(params.session_id)
        self._state.mcp.forget(params.session_id)
        self._sent_commands.pop(params.session_id, None)
        return Empty()

    async def delete(self, params: SessionIdParams) -> Empty:
        await self._state.sessions.wait_released(params.session_id)
        await self._state.sessions.delete(params.session_id)  # an unknown session is deleted already
        self._state.mcp.forget(params.session_id)
        self._sent_commands.pop(params.session_id, None)
        return Empty()

    async def fork(self, params: ResumeSessionRequest) -> ForkSessionResponse:
        _require_roots(params.cwd, params.additional_directories)
        await self._state.sessions.wait_released(params.session_id)
        source = self._state.sessions.restore(params.session_id, None, None)
        directories = params.additional_directories
        if directories is None:  # the fork lives where its source does
            directories = source.additional_directories
        fork = self._state.sessions.fork(source, params.cwd, directories)
        await self._state.mcp.attach(fork, params.mcp_servers, self._announce_after_reply(fork))
        self._preload(fork)
        state = self._state.state_of(fork)
        return ForkSessionResponse(session_id=fork.id, modes=state.modes, config_options=state.config_options)

    def _preload(self, session: Session) -> None:
        self._state.preload.start(session.model, self._state.settings)
