"""The `Client` seam: everything the agent core asks of whoever drives it (an editor, or the headless CLI)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..acp.schema import (
    ClientCapabilities,
    PermissionOption,
    PermissionOutcome,
    SessionUpdate,
    TerminalExitStatus,
    TerminalOutputResponse,
    ToolCallFields,
)


class Client(Protocol):
    """The editor behind the wire (`server.editor.EditorClient`) or a local stand-in; the core never knows which.

    The file and terminal methods may be called only when `capabilities` advertises them; `Files` and
    `shell.run_local` stand in with the local disk and local process groups otherwise.
    """

    @property
    def capabilities(self) -> ClientCapabilities: ...

    async def session_update(self, session_id: str, update: SessionUpdate) -> None:
        """Stream one update to the user."""
        ...

    async def replay_updates(self, session_id: str, updates_json: Sequence[bytes]) -> None:
        """Send again updates stored as JSON, in order (replaying a loaded session)."""
        ...

    async def request_permission(
        self, session_id: str, tool_call: ToolCallFields, options: Sequence[PermissionOption]
    ) -> PermissionOutcome:
        """Ask the user whether a tool call may run."""
        ...

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None
    ) -> str:
        """Read a text file as the editor sees it (unsaved buffers included)."""
        ...

    async def write_text_file(self, session_id: str, path: str, content: str) -> None: ...

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: Sequence[str] = (),
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        output_byte_limit: int | None = None,
    ) -> str:
        """Start a command in an editor terminal; returns its id at once."""
        ...

    async def terminal_output(self, session_id: str, terminal_id: str) -> TerminalOutputResponse: ...

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str) -> TerminalExitStatus: ...

    async def kill_terminal(self, session_id: str, terminal_id: str) -> None: ...

    async def release_terminal(self, session_id: str, terminal_id: str) -> None: ...
