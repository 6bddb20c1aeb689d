"""The user's own commands: Markdown files in their config folder and in the project.

`$XDG_CONFIG_HOME/coder-agent/commands/NAME.md` (the user's) and `<project>/.coder-agent/commands/NAME.md`
(the project's) each make `/NAME`; the file's text, with `$ARGUMENTS` replaced by what follows the name,
becomes the prompt. A file may start with front matter (`---` lines) giving `description` and
`argument-hint`; nothing else in it is read: a command is text for the model, never settings. A project's
file is someone else's text, so it is shown as the project's and cannot shadow a built-in or the user's own.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from ..session import Session
from .base import NAME, Command, with_arguments

log = logging.getLogger(__name__)

MAX_COMMAND_BYTES = 64 * 1024
MAX_COMMANDS = 200  # per folder
PROJECT_FOLDER = Path(".coder-agent") / "commands"
_DESCRIPTION_CHARS = 100


@dataclass(frozen=True)
class CommandFile:
    name: str
    path: Path
    origin: str  # "user" or "project"
    description: str
    hint: str | None
    body: str

    def command(self) -> Command:
        async def expand(session: Session, arguments: str) -> str:
            return with_arguments(self.body, arguments)

        return Command(self.name, self.description, self.hint, expand=expand)


def _front_matter(text: str) -> tuple[dict[str, str], str]:
    """(description and argument-hint, the rest) of a file that starts with `---` lines; other keys ignored."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return {}, text
    for end, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            fields: dict[str, str] = {}
            for entry in lines[1:end]:
                key, sep, value = entry.partition(":")
                if sep and key.strip() in ("description", "argument-hint"):
                    fields[key.strip()] = value.strip().strip("\"'")
            return fields, "\n".join(lines[end + 1 :])
    return {}, text


def read_command(path: Path, origin: str) -> CommandFile | None:
    name = path.stem
    if not NAME.fullmatch(name):
        log.info("ignoring command file %s: a command name is letters, digits, _ and -", path)
        return None
    try:
        data = path.read_bytes()[: MAX_COMMAND_BYTES + 1]
    except OSError as exc:
        log.info("cannot read command file %s: %s", path, exc)
        return None
    if len(data) > MAX_COMMAND_BYTES:
        log.info("ignoring command file %s: larger than %d bytes", path, MAX_COMMAND_BYTES)
        return None
    fields, body = _front_matter(data.decode("utf-8", errors="replace"))
    body = body.strip()
    if not body:
        return None
    first_line = next((line.strip("# ").strip() for line in body.splitlines() if line.strip()), name)
    description = fields.get("description") or first_line
    if len(description) > _DESCRIPTION_CHARS:
        description = description[: _DESCRIPTION_CHARS - 1] + "…"
    description = f"{description} ({origin})"
    hint = fields.get("argument-hint") or ("arguments" if "$ARGUMENTS" in body else None)
    return CommandFile(name, path, origin, description, hint, body)


def read_folder(folder: Path, origin: str) -> list[CommandFile]:
    """The commands in one folder, by name; a missing folder has none."""
    try:
        paths = sorted(path for path in folder.glob("*.md") if path.is_file())
    except OSError:
        return []
    found = [read_command(path, origin) for path in paths[:MAX_COMMANDS]]
    return [command for command in found if command is not None]


def command_files(user_folder: Path | None, project_root: str) -> list[CommandFile]:
    """The user's commands, then the project's that do not reuse a user command's name (blocking: off-loop)."""
    own = read_folder(user_folder, "user") if user_folder is not None else []
    taken = {command.name for command in own}
    project = [c for c in read_folder(Path(project_root) / PROJECT_FOLDER, "project") if c.name not in taken]
    return own + project
