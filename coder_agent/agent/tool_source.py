"""Where a session's tools come from besides the built-in ones (its MCP servers, say): the core's view of them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .tools.base import Tool


@dataclass(frozen=True)
class PromptArgument:
    name: str
    description: str = ""
    required: bool = False


@dataclass(frozen=True)
class SourcePrompt:
    """A prompt the source offers (an MCP server's `prompts/list`), under the name the user types after `/`."""

    name: str
    description: str
    arguments: tuple[PromptArgument, ...] = ()


class ToolSource(Protocol):
    """Tools that come and go with something outside the agent; the session owns it and closes it."""

    def tools(self) -> list[Tool[Any]]:
        """The tools available now."""
        ...

    def prompts(self) -> list[SourcePrompt]:
        """The prompts available now (offered to the user as slash commands)."""
        ...

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> str:
        """The text of the prompt `name` with `arguments`; raises `AgentError` saying why it cannot be had."""
        ...

    async def wait_ready(self, timeout: float) -> None:
        """Wait (at most `timeout` seconds) until the tools that are still starting are there; never raises."""
        ...

    async def close(self) -> None:
        """Stop whatever provides the tools (bounded)."""
        ...
