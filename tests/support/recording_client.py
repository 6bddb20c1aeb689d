"""The editor the e2e tests play: records what the agent sends, answers permission requests by a policy."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Literal

import anyio
from acp import RequestError
from acp.interfaces import Agent
from acp.schema import (
    AgentMessageChunk,
    AllowedOutcome,
    DeniedOutcome,
    PermissionOption,
    PermissionOptionKind,
    RequestPermissionResponse,
    TextContentBlock,
    ToolCallUpdate,
)

SessionUpdate = Any  # one of the pydantic models in SessionNotification.update (a discriminated union)
PermissionPolicy = PermissionOptionKind | Literal["cancelled"] | Callable[["PermissionRequest"], str | None]


@dataclass(frozen=True)
class PermissionRequest:
    session_id: str
    tool_call: ToolCallUpdate
    options: list[PermissionOption]


def _refuse(method: str) -> Callable[..., Coroutine[Any, Any, Any]]:
    async def handler(self: object, *args: Any, **kwargs: Any) -> Any:
        raise RequestError.method_not_found(method)

    return handler


class RecordingClient:
    """An ``acp.Client`` that records what the agent sends and answers permission requests by a policy.

    ``permission``: an option kind to pick (default ``allow_once``; ``cancelled`` if no option has that kind),
    ``"cancelled"``, or a callable returning the optionId to select (None = cancelled). fs/*, terminal/* and
    elicitation answer method-not-found: the agent may call them only if the client advertises them.
    """

    def __init__(self, permission: PermissionPolicy = "allow_once") -> None:
        self.permission = permission
        self.permission_requests: list[PermissionRequest] = []
        self.ext_notifications: list[tuple[str, dict[str, Any]]] = []
        self.conn: Agent | None = None
        self._updates: defaultdict[str, list[SessionUpdate]] = defaultdict(list)
        self._changed: anyio.Event | None = None

    def on_connect(self, conn: Agent) -> None:
        self.conn = conn

    def updates(self, session_id: str) -> list[SessionUpdate]:
        return list(self._updates[session_id])

    def agent_text(self, session_id: str) -> str:
        return "".join(
            update.content.text
            for update in self._updates[session_id]
            if isinstance(update, AgentMessageChunk) and isinstance(update.content, TextContentBlock)
        )

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 5.0) -> None:
        """Until predicate() holds, re-checked after every update or permission request (bounded)."""
        with anyio.fail_after(timeout):
            while not predicate():
                self._changed = self._changed or anyio.Event()
                await self._changed.wait()

    async def wait_for_updates(self, session_id: str, count: int, timeout: float = 5.0) -> list[SessionUpdate]:
        await self.wait_for(lambda: len(self._updates[session_id]) >= count, timeout)
        return self.updates(session_id)

    async def wait_for_update(
        self, session_id: str, match: Callable[[SessionUpdate], bool], timeout: float = 5.0
    ) -> SessionUpdate:
        await self.wait_for(lambda: any(match(u) for u in self._updates[session_id]), timeout)
        return next(u for u in self._updates[session_id] if match(u))

    def _notify(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    async def session_update(self, session_id: str, update: SessionUpdate, **kwargs: Any) -> None:
        # The SDK runs each notification as its own task: append before any await to keep wire order.
        self._updates[session_id].append(update)
        self._notify()

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        request = PermissionRequest(session_id, tool_call, list(options))
        self.permission_requests.append(request)
        self._notify()
        policy = self.permission
        if callable(policy):
            chosen = policy(request)
        else:
            chosen = next((option.option_id for option in options if option.kind == policy), None)
        if chosen is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=chosen))

    # Not advertised yet, so a correct agent never calls these (a later editor profile will serve them).
    read_text_file = _refuse("fs/read_text_file")
    write_text_file = _refuse("fs/write_text_file")
    create_terminal = _refuse("terminal/create")
    terminal_output = _refuse("terminal/output")
    release_terminal = _refuse("terminal/release")
    wait_for_terminal_exit = _refuse("terminal/wait_for_exit")
    kill_terminal = _refuse("terminal/kill")
    create_elicitation = _refuse("elicitation/create")

    async def complete_elicitation(self, elicitation_id: str, **kwargs: Any) -> None:
        return None

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        self.ext_notifications.append((method, params))
