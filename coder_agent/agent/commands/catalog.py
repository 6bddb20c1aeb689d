"""The commands of a session: the built-in ones."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...acp.schema import AvailableCommand, ContentBlock
from ..session import Session
from .base import Command, Invocation, parse
from .builtin import BUILTINS


@dataclass(frozen=True)
class Resolved:
    command: Command
    invocation: Invocation


class Commands:
    """Finds a session's commands."""

    def __init__(self, builtins: Sequence[Command] = BUILTINS) -> None:
        self._builtins = list(builtins)

    async def of(self, session: Session) -> list[Command]:
        return list(self._builtins)

    async def available(self, session: Session) -> list[AvailableCommand]:
        return [command.available() for command in await self.of(session)]

    async def resolve(self, session: Session, blocks: Sequence[ContentBlock]) -> Resolved | None:
        """The command the prompt invokes; None when it invokes none (an unknown `/word` is plain text)."""
        invocation = parse(blocks)
        if invocation is None:
            return None
        command = next((c for c in await self.of(session) if c.name == invocation.name), None)
        return Resolved(command, invocation) if command is not None else None
