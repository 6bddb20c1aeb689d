"""The `Client` seam: everything the agent core asks of whoever drives it (an editor, or the headless CLI)."""

from __future__ import annotations

from typing import Protocol

from ..acp.schema import ClientCapabilities, SessionUpdate


class Client(Protocol):
    """The editor behind the wire (`RemoteClient`) or a local stand-in; the core never knows which."""

    @property
    def capabilities(self) -> ClientCapabilities: ...

    async def session_update(self, session_id: str, update: SessionUpdate) -> None:
        """Stream one update to the user."""
        ...

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None
    ) -> str:
        """Read a text file as the editor sees it (unsaved buffers included)."""
        ...
