"""`LocalClient`: the headless run as the agent core's `Client`.

It advertises no file system and no terminal, as a bare ACP client would: the agent then reads and writes
the disk itself and runs commands as local subprocesses (`agent.files`, `agent.shell`). Updates go to the
run's output; permission questions, which the session's mode decides to ask, go to a `PermissionPolicy`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from pydantic import TypeAdapter

from ..acp.errors import RequestError
from ..acp.schema import (
    ClientCapabilities,
    PermissionOption,
    PermissionOutcome,
    SessionUpdate,
    TerminalExitStatus,
    TerminalOutputResponse,
    ToolCallFields,
)

_UPDATE = TypeAdapter[SessionUpdate](SessionUpdate)


class PermissionPolicy(Protocol):
    async def decide(self, tool_call: ToolCallFields, options: Sequence[PermissionOption]) -> PermissionOutcome: ...


class LocalClient:
    def __init__(self, on_update: Callable[[SessionUpdate], None], permissions: PermissionPolicy) -> None:
        self._on_update = on_update
        self._permissions = permissions
        self._capabilities = ClientCapabilities()

    @property
    def capabilities(self) -> ClientCapabilities:
        return self._capabilities

    def set_capabilities(self, capabilities: ClientCapabilities) -> None:
        self._capabilities = capabilities

    async def session_update(self, session_id: str, update: SessionUpdate) -> None:
        self._on_update(update)

    async def replay_updates(self, session_id: str, updates_json: Sequence[bytes]) -> None:
        for body in updates_json:  # a headless run resumes without replay; this is for completeness
            self._on_update(_UPDATE.validate_json(body))

    async def request_permission(
        self, session_id: str, tool_call: ToolCallFields, options: Sequence[PermissionOption]
    ) -> PermissionOutcome:
        return await self._permissions.decide(tool_call, options)

    # No `fs` and no `terminal` capability: the agent never calls these; an editor-only feature would fail here.

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None
    ) -> str:
        raise RequestError.method_not_found("fs/read_text_file")

    async def write_text_file(self, session_id: str, path: str, content: str) -> None:
        raise RequestError.method_not_found("fs/write_text_file")

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: Sequence[str] = (),
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        output_byte_limit: int | None = None,
    ) -> str:
        raise RequestError.method_not_found("terminal/create")

    async def terminal_output(self, session_id: str, terminal_id: str) -> TerminalOutputResponse:
        raise RequestError.method_not_found("terminal/output")

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str) -> TerminalExitStatus:
        raise RequestError.method_not_found("terminal/wait_for_exit")

    async def kill_terminal(self, session_id: str, terminal_id: str) -> None:
        raise RequestError.method_not_found("terminal/kill")

    async def release_terminal(self, session_id: str, terminal_id: str) -> None:
        raise RequestError.method_not_found("terminal/release")
