"""Where a session's tools come from besides the built-in ones (its MCP servers, say): the core's view of them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .tools.base import Tool


class ToolSource(Protocol):
    """Tools that come and go with something outside the agent; the session owns it and closes it."""

    def tools(self) -> list[Tool[Any]]:
        """The tools available now."""
        ...

    async def wait_ready(self, timeout: float) -> None:
        """Wait (at most `timeout` seconds) until the tools that are still starting are there; never raises."""
        ...

    async def close(self) -> None:
        """Stop whatever provides the tools (bounded)."""
        ...
