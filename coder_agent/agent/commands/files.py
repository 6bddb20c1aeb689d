"""The user's own commands: Markdown files in their config folder and in the project (read by
`prestart.command_menu`, which the early stage shares), as commands of the session.

The file's text, with `$ARGUMENTS` replaced by what follows the name, becomes the prompt. A command is text for
the model, never settings. A project's file is someone else's text, so it is shown as the project's and cannot
shadow a built-in or the user's own. One that was not read stays in the menu saying why, and using it tells the
user so: nothing of it reaches the model.
"""

from __future__ import annotations

from ...acp.schema import StopReason
from ...prestart.command_menu import (
    MAX_COMMAND_BYTES,
    PROJECT_FOLDER,
    CommandFile,
    command_files,
    read_command,
    read_folder,
)
from ..sessions.session import Session
from .base import Command, CommandServices, with_arguments

__all__ = ["MAX_COMMAND_BYTES", "PROJECT_FOLDER", "command_files", "command_of", "read_command", "read_folder"]


def command_of(file: CommandFile) -> Command:
    """The command a file makes: its text as the prompt, or, for a file that was not read, a word saying why."""
    if file.refused:
        said = f"/{file.name} was not run: {file.path} was not read: {file.refused}."

        async def tell(session: Session, arguments: str, services: CommandServices) -> StopReason:
            await services.say(session, said)
            return "end_turn"

        return Command(file.name, file.description, None, action=tell)
    body = file.body

    async def expand(session: Session, arguments: str) -> str:
        return with_arguments(body, arguments)

    return Command(file.name, file.description, file.hint, expand=expand)
