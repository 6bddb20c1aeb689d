"""Slash commands as text: how a prompt names one, the user's and the project's Markdown command files, and the
built-ins' names. Stdlib only: the runtime's commands (`agent.commands`) and the early first call
(`prestart.early_prompt`, which expands a first prompt that is a command as the turn would) read them alike.

`$XDG_CONFIG_HOME/coder-agent/commands/NAME.md` (the user's) and `<project>/.coder-agent/commands/NAME.md`
(the project's) each make `/NAME`; the file's text, with `$ARGUMENTS` replaced by what follows the name,
becomes the prompt. A file may start with front matter (`---` lines) giving `description` and
`argument-hint`; nothing else in it is read: a command is text for the model, never settings. A project's
file is someone else's text, so it is shown as the project's and cannot shadow a built-in or the user's own.

The project decides what its paths are (`x.md -> ~/.aws/credentials`, a pipe, a 3 GB file): a file is read only
if it is a regular file (inside the session's roots, for the project's), and only its first bytes. One that is
not read stays in the menu saying why, and using it tells the user so: nothing of it reaches the model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .prompts import render
from .untrusted import Refused, read_capped

if TYPE_CHECKING:
    import logging

INVOCATION = re.compile(r"/([A-Za-z0-9_][A-Za-z0-9_.:-]*)(?:\s+(.*))?", re.DOTALL)
NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,63}")  # what a command file's name may be
MAX_COMMAND_BYTES = 64 * 1024
MAX_COMMANDS = 200  # per folder
PROJECT_FOLDER = Path(".coder-agent") / "commands"
_DESCRIPTION_CHARS = 100

# The built-ins (`agent.commands.builtin.BUILTINS`: a test holds the two the same); they come before any file.
BUILTIN_NAMES = ("compact", "init", "review", "undo", "rewind")


def invocation(text: str) -> tuple[str, str] | None:
    """(name, arguments) of `/name arguments`, the whole of a prompt's first text; None when it is not that."""
    match = INVOCATION.fullmatch(text.strip())
    return None if match is None else (match.group(1), (match.group(2) or "").strip())


def with_arguments(template: str, arguments: str) -> str:
    """A command's text with `$ARGUMENTS` replaced; without the placeholder, the arguments follow the text."""
    if "$ARGUMENTS" in template:
        return template.replace("$ARGUMENTS", arguments)
    return f"{template.rstrip()}\n\n{arguments}" if arguments else template


def init_text(arguments: str) -> str:
    """What `/init` asks of the model."""
    return render("commands/init.md", instructions=extra(arguments))


def extra(arguments: str) -> str:
    return f"\nThe user adds: {arguments}" if arguments else ""


@dataclass(frozen=True)
class CommandFile:
    name: str
    path: Path
    origin: str  # "user" or "project"
    description: str
    hint: str | None
    body: str
    refused: str = ""  # why the file was not read ("": it was)


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


def _log() -> logging.Logger:
    import logging  # here: the early first call reads command files before logging is imported (~7 ms)

    return logging.getLogger(__name__)


def _not_read(name: str, path: Path, origin: str, why: str) -> CommandFile:
    _log().warning("the command file %s was not read: %s", path, why)
    return CommandFile(name, path, origin, f"not read: {why} ({origin})", None, "", refused=why)


def read_command(path: Path, origin: str, roots: Sequence[str] | None = None) -> CommandFile | None:
    """The command a file makes; one not read (`refused`) when it is no regular file, leads outside `roots`
    (None: anywhere) or is too large; None when it is gone or its name cannot be a command's."""
    name = path.stem
    if not NAME.fullmatch(name):
        _log().info("ignoring command file %s: a command name is letters, digits, _ and -", path)
        return None
    try:
        got = read_capped(str(path), MAX_COMMAND_BYTES, roots)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except Refused as exc:
        return _not_read(name, path, origin, exc.reason)
    except OSError as exc:
        return _not_read(name, path, origin, f"it could not be read: {exc.strerror or exc}")
    if got.cut:  # a command cut short is not the command its author wrote: none at all
        return _not_read(name, path, origin, f"it is larger than {MAX_COMMAND_BYTES // 1024} KiB ({got.size:,} bytes)")
    fields, body = _front_matter(got.data.decode("utf-8", errors="replace"))
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


def read_folder(folder: Path, origin: str, roots: Sequence[str] | None = None) -> list[CommandFile]:
    """The commands in one folder, by name; a missing folder has none. Every `*.md` but a folder is looked at:
    one that is no regular file is listed as not read (`read_command`), not left out unsaid."""
    try:
        paths = sorted(path for path in folder.glob("*.md") if not path.is_dir())
    except OSError:
        return []
    found = [read_command(path, origin, roots) for path in paths[:MAX_COMMANDS]]
    return [command for command in found if command is not None]


def command_files(user_folder: Path | None, project_root: str, roots: Sequence[str]) -> list[CommandFile]:
    """The user's commands, then the project's that do not reuse a user command's name (blocking: off-loop).

    The project's are read only inside `roots` (the session's folders); the user's own folder is theirs, so a
    link there may lead anywhere, but still only to a regular file, and no more than the cap is read."""
    own = read_folder(user_folder, "user") if user_folder is not None else []
    taken = {command.name for command in own}
    folder = Path(project_root) / PROJECT_FOLDER
    project = [c for c in read_folder(folder, "project", roots) if c.name not in taken]
    return own + project
