"""The user's own commands (Markdown files in their config folder and in the project, read by `kit.commands`) as
commands of a session: the text with its arguments as the prompt, or, for a file that was not read, saying why."""

from __future__ import annotations

from ...acp.schema import StopReason
from ...kit.commands import CommandFile, command_files, with_arguments
from ..sessions.session import Session
from .base import Command, CommandServices

__all__ = ["command_files", "command_of"]


def command_of(file: CommandFile) -> Command:
    if file.refused:
        said = f"/{file.name} was not run: {file.path} was not read: {file.refused}."

        async def tell(session: Session, arguments: str, services: CommandServices) -> StopReason:
            await services.say(session, said)
            return "end_turn"

        return Command(file.name, file.description, None, action=tell)

    async def expand(session: Session, arguments: str) -> str:
        return with_arguments(file.body, arguments)

    return Command(file.name, file.description, file.hint, expand=expand)
