"""The session lifecycle methods beyond `session/new`: load (with replay), resume, list, close, delete, fork."""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from ..acp.errors import INTERNAL_ERROR, RequestError
from ..acp.router import Router
from ..acp.schema import (
    Empty,
    ForkSessionResponse,
    ListSessionsRequest,
    ListSessionsResponse,
    LoadSessionRequest,
    McpServer,
    ResumeSessionRequest,
    SessionIdParams,
    SessionInfo,
    SessionStateResponse,
)
from ..store.base import StoreError
from .session import Session
from .sessions import Sessions

log = logging.getLogger(__name__)

StateOf = Callable[[Session], SessionStateResponse]
P = TypeVar("P")
R = TypeVar("R")


def store_errors(handler: Callable[[Any, P], Awaitable[R]]) -> Callable[[Any, P], Awaitable[R]]:
    """A store that cannot be read becomes a clear JSON-RPC error, never a crash."""

    @functools.wraps(handler)
    async def wrapped(self: Any, params: P) -> R:
        try:
            return await handler(self, params)
        except StoreError as exc:
            raise RequestError(INTERNAL_ERROR, f"Sessions cannot be read: {exc}") from exc

    return wrapped


def _list_meta(last_turn: object) -> dict[str, Any] | None:
    """How the session's last turn ended, for clients that show it (`_meta`, as the spec reserves it for us)."""
    if not isinstance(last_turn, dict):
        return None
    return {"coder-agent": {"lastTurn": {k: v for k, v in last_turn.items() if k in ("stop_reason", "error", "at")}}}


def require_absolute(name: str, path: str) -> None:
    if not os.path.isabs(path):
        raise RequestError.invalid_params(f"Invalid params: {name} must be an absolute path, got {path!r}")


class SessionMethods:
    def __init__(
        self,
        sessions: Sessions,
        state_of: StateOf,
        announce_state: Callable[[Session], Awaitable[None]],
        attach_mcp: Callable[[Session, Sequence[McpServer]], Awaitable[None]],
    ) -> None:
        self._sessions = sessions
        self._state_of = state_of
        self._announce_state = announce_state
        self._attach_mcp = attach_mcp

    def register(self, router: Router) -> None:
        router.on_request("session/load", LoadSessionRequest, self.load)
        router.on_request("session/resume", ResumeSessionRequest, self.resume)
        router.on_request("session/list", ListSessionsRequest, self.list)
        router.on_request("session/close", SessionIdParams, self.close)
        router.on_request("session/delete", SessionIdParams, self.delete)
        router.on_request("session/fork", ResumeSessionRequest, self.fork)

    async def _restore(self, params: LoadSessionRequest | ResumeSessionRequest) -> Session:
        require_absolute("cwd", params.cwd)
        for directory in params.additional_directories or ():
            require_absolute("additionalDirectories[]", directory)
        session = self._sessions.restore(params.session_id, params.cwd, params.additional_directories)
        await self._attach_mcp(session, params.mcp_servers)
        return session

    @store_errors
    async def load(self, params: LoadSessionRequest) -> SessionStateResponse:
        session = await self._restore(params)
        count = await self._sessions.replay(session)
        await self._announce_state(session)
        log.info("loaded %s: replayed %d updates", session.id, count)
        return self._state_of(session)

    @store_errors
    async def resume(self, params: ResumeSessionRequest) -> SessionStateResponse:
        return self._state_of(await self._restore(params))

    @store_errors
    async def list(self, params: ListSessionsRequest) -> ListSessionsResponse:
        records, next_cursor = self._sessions.list(params.cwd, params.cursor)
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

    @store_errors
    async def close(self, params: SessionIdParams) -> Empty:
        await self._sessions.close(params.session_id)
        return Empty()

    @store_errors
    async def delete(self, params: SessionIdParams) -> Empty:
        await self._sessions.delete(params.session_id)  # an unknown session is deleted already
        return Empty()

    @store_errors
    async def fork(self, params: ResumeSessionRequest) -> ForkSessionResponse:
        require_absolute("cwd", params.cwd)
        for directory in params.additional_directories or ():
            require_absolute("additionalDirectories[]", directory)
        source = self._sessions.restore(params.session_id, None, None)
        directories = params.additional_directories
        fork = self._sessions.fork(
            source, params.cwd, source.additional_directories if directories is None else directories
        )
        await self._attach_mcp(fork, params.mcp_servers)
        state = self._state_of(fork)
        return ForkSessionResponse(session_id=fork.id, modes=state.modes, config_options=state.config_options)
