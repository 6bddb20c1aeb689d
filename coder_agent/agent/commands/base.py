"""Slash commands: what one is, and how a prompt names one (`/name arguments` at the start of its first text).

A command either runs its own logic (`action`: `/compact`) or becomes the prompt of a normal turn (`expand`:
`/init`, `/review`, the user's Markdown commands, an MCP server's prompts). The user's own words stay in the
session's record as typed; the model reads the expansion. An unknown `/word` is plain text for the model.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...acp.schema import AvailableCommand, AvailableCommandInput, ContentBlock, StopReason, TextContent
from ...kit.commands import invocation, with_arguments

__all__ = ["Command", "CommandServices", "Invocation", "parse", "with_arguments"]

if TYPE_CHECKING:
    from ..sessions.session import Session
    from ..workspace.undo import UndoReport


class CommandServices:
    """What built-in actions may ask of the agent (the turn machinery implements it)."""

    async def compact(self, session: Session, focus: str) -> StopReason:
        raise NotImplementedError

    async def undo(self, session: Session, turns: int, force: bool) -> UndoReport:
        raise NotImplementedError

    async def rewind(self, session: Session, turns: int, force: bool) -> UndoReport:
        raise NotImplementedError

    async def say(self, session: Session, text: str) -> None:
        """Show the user a message of the agent's own (not the model's)."""
        raise NotImplementedError


Action = Callable[["Session", str, CommandServices], Awaitable[StopReason]]
Expander = Callable[["Session", str], Awaitable[str]]


@dataclass(frozen=True)
class Command:
    name: str
    description: str
    hint: str | None = None  # shown while the user types the arguments; None: the command takes none
    action: Action | None = None  # runs instead of a model turn
    expand: Expander | None = None  # the prompt text of the model turn it runs

    def available(self) -> AvailableCommand:
        hint = AvailableCommandInput(hint=self.hint) if self.hint else None
        return AvailableCommand(name=self.name, description=self.description, input=hint)


@dataclass(frozen=True)
class Invocation:
    name: str
    arguments: str
    rest: list[ContentBlock]  # the prompt's other blocks (an image, a file), which go along with an expansion


def parse(blocks: Sequence[ContentBlock]) -> Invocation | None:
    """`/name arguments` at the very start of the prompt's first block, if it is text; else None."""
    if not blocks or not isinstance(blocks[0], TextContent):
        return None
    named = invocation(blocks[0].text)
    return None if named is None else Invocation(*named, list(blocks[1:]))
