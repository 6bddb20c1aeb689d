"""`FillIn`: the editor as the core's `Client`, with this machine serving what the editor does not offer.

Files go to the editor when it advertised `fs.readTextFile` / `fs.writeTextFile` (it sees unsaved buffers and
reviews each change), else to the disk; commands go to its terminals when it advertised `terminal` (the user
watches them), else to local process groups. The editor's capabilities are read at each call: they arrive
with `initialize`, after this wrapper is built. A terminal keeps the side that created it until released.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import anyio.abc

from ..acp.schema import (
    ClientCapabilities,
    CreateElicitationRequest,
    CreateElicitationResponse,
    ElicitationMode,
    PermissionOption,
    PermissionOutcome,
    SessionUpdate,
    TerminalExitStatus,
    TerminalOutputResponse,
    ToolCallFields,
)
from ..agent.client import Client
from .files import LocalFiles
from .terminals import LocalTerminals


class Editor(Client, Protocol):
    """A client that says what it offers: its `fs` and `terminal` methods are called only when it does."""

    @property
    def capabilities(self) -> ClientCapabilities: ...


class FillIn:
    def __init__(self, editor: Editor, tasks: anyio.abc.TaskGroup) -> None:
        """`tasks` runs the local terminals' output pumps; it must outlive every terminal."""
        self._editor = editor
        self._files = LocalFiles()
        self._terminals = LocalTerminals(tasks)
        self._local_terminals: set[str] = set()

    # ---- the editor's alone ---------------------------------------------------------------------------

    async def session_update(self, session_id: str, update: SessionUpdate) -> None:
        await self._editor.session_update(session_id, update)

    async def replay_updates(self, session_id: str, updates_json: Sequence[bytes]) -> None:
        await self._editor.replay_updates(session_id, updates_json)

    async def request_permission(
        self, session_id: str, tool_call: ToolCallFields, options: Sequence[PermissionOption]
    ) -> PermissionOutcome:
        return await self._editor.request_permission(session_id, tool_call, options)

    def can_ask_user(self) -> bool:
        return self._editor.can_ask_user()

    def elicitation_modes(self) -> frozenset[ElicitationMode]:
        return self._editor.elicitation_modes()

    async def create_elicitation(self, request: CreateElicitationRequest) -> CreateElicitationResponse:
        return await self._editor.create_elicitation(request)

    async def complete_elicitation(self, elicitation_id: str) -> None:
        await self._editor.complete_elicitation(elicitation_id)

    # ---- files ----------------------------------------------------------------------------------------

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None
    ) -> str:
        reader = self._editor if self._editor.capabilities.fs.read_text_file else self._files
        return await reader.read_text_file(session_id, path, line, limit)

    async def write_text_file(self, session_id: str, path: str, content: str) -> None:
        writer = self._editor if self._editor.capabilities.fs.write_text_file else self._files
        await writer.write_text_file(session_id, path, content)

    # ---- terminals ------------------------------------------------------------------------------------

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: Sequence[str] = (),
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        output_byte_limit: int | None = None,
    ) -> str:
        if self._editor.capabilities.terminal:
            return await self._editor.create_terminal(session_id, command, args, cwd, env, output_byte_limit)
        terminal_id = await self._terminals.create_terminal(session_id, command, args, cwd, env, output_byte_limit)
        self._local_terminals.add(terminal_id)
        return terminal_id

    def takes_compaction_updates(self) -> bool:
        return self._editor.capabilities.compaction_updates

    def shows_terminal(self, terminal_id: str) -> bool:
        return terminal_id not in self._local_terminals and self._editor.shows_terminal(terminal_id)

    def _terminal_side(self, terminal_id: str) -> Client | LocalTerminals:
        return self._terminals if terminal_id in self._local_terminals else self._editor

    async def terminal_output(self, session_id: str, terminal_id: str) -> TerminalOutputResponse:
        return await self._terminal_side(terminal_id).terminal_output(session_id, terminal_id)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str) -> TerminalExitStatus:
        return await self._terminal_side(terminal_id).wait_for_terminal_exit(session_id, terminal_id)

    async def kill_terminal(self, session_id: str, terminal_id: str) -> None:
        await self._terminal_side(terminal_id).kill_terminal(session_id, terminal_id)

    async def release_terminal(self, session_id: str, terminal_id: str) -> None:
        side = self._terminal_side(terminal_id)
        try:
            await side.release_terminal(session_id, terminal_id)
        finally:
            self._local_terminals.discard(terminal_id)
