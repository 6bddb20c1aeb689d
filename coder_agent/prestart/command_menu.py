"""The slash-command menu of a session, in the standard library: the built-ins' names and descriptions, and the
user's and the project's Markdown command files, read as the agent reads them.

The early stage announces the menu right after its `session/new` answer (`cli.acp`), before the runtime is in:
a `/` typed at once shows the agent's commands, not only the client's. The runtime reads the same files the
same way (`agent.commands.files`) and announces again only what changed (the MCP servers' prompts, later).

`$XDG_CONFIG_HOME/coder-agent/commands/NAME.md` (the user's) and `<project>/.coder-agent/commands/NAME.md` (the
project's) each make `/NAME`. A file may start with front matter (`---` lines) giving `description` and
`argument-hint`; nothing else in it is read. The project decides what its paths are (`x.md -> ~/.aws/credentials`,
a pipe, a 3 GB file): a file is read only if it is a regular file (inside the session's roots, for the
project's), and only its first bytes. One that is not read stays in the menu saying why.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..kit.untrusted import Refused, read_capped


def _log(level: int, message: str, *args: object) -> None:
    """Logged with `logging`, imported only when there is something to say: the early stage announces the menu
    before the runtime (which imports it anyway) is in, and the import costs it ~5-50 ms."""
    import logging

    logging.getLogger(__name__).log(level, message, *args)


_INFO, _WARNING = 20, 30  # logging.INFO, logging.WARNING

MAX_COMMAND_BYTES = 64 * 1024
MAX_COMMANDS = 200  # per folder
PROJECT_FOLDER = Path(".coder-agent") / "commands"
NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,63}")  # what a command file's name may be
_DESCRIPTION_CHARS = 100

# The built-in commands as the menu shows them: (name, description, hint or None when it takes no arguments).
# `agent.commands.builtin` gives each its behaviour.
BUILTIN_MENU: tuple[tuple[str, str, str | None], ...] = (
    (
        "compact",
        "Summarise the conversation so far, to free the model's context window",
        "what to keep in focus (optional)",
    ),
    ("init", "Write or update the project's AGENTS.md from what the agent learns of it", None),
    ("review", "Review the uncommitted changes", "what to look at (optional)"),
    ("undo", "Put back the files the last turn changed", "--force to overwrite later changes"),
    ("rewind", "Go back N turns (default 1): their file changes and the conversation", "N [--force]"),
)


class CommandFile:
    """One command file, read (`body`) or not (`refused` says why). A plain class: `dataclasses` costs the
    early stage ~10 ms of imports."""

    __slots__ = ("body", "description", "hint", "name", "origin", "path", "refused")

    def __init__(
        self, name: str, path: Path, origin: str, description: str, hint: str | None, body: str, refused: str = ""
    ) -> None:
        self.name = name
        self.path = path
        self.origin = origin  # "user" or "project"
        self.description = description
        self.hint = hint
        self.body = body
        self.refused = refused  # why the file was not read ("": it was)


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


def _not_read(name: str, path: Path, origin: str, why: str) -> CommandFile:
    _log(_WARNING, "the command file %s was not read: %s", path, why)
    return CommandFile(name, path, origin, f"not read: {why} ({origin})", None, "", refused=why)


def read_command(path: Path, origin: str, roots: Sequence[str] | None = None) -> CommandFile | None:
    """The command a file makes; one not read (`refused`) when it is no regular file, leads outside `roots`
    (None: anywhere) or is too large; None when it is gone or its name cannot be a command's."""
    name = path.stem
    if not NAME.fullmatch(name):
        _log(_INFO, "ignoring command file %s: a command name is letters, digits, _ and -", path)
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
    """The user's commands, then the project's that reuse no built-in's or user command's name (blocking).

    The project's are read only inside `roots` (the session's folders); the user's own folder is theirs, so a
    link there may lead anywhere, but still only to a regular file, and no more than the cap is read."""
    own = read_folder(user_folder, "user") if user_folder is not None else []
    builtins = {name for name, _, _ in BUILTIN_MENU}
    own = [command for command in own if command.name not in builtins]
    taken = builtins | {command.name for command in own}
    folder = Path(project_root) / PROJECT_FOLDER
    project = [c for c in read_folder(folder, "project", roots) if c.name not in taken]
    return own + project


def entry(name: str, description: str, hint: str | None) -> dict[str, Any]:
    """One command as `available_commands_update` lists it (wire form)."""
    return {"name": name, "description": description, **({"input": {"hint": hint}} if hint else {})}


def menu(user_folder: Path | None, cwd: str, roots: Sequence[str]) -> list[dict[str, Any]]:
    """The built-ins, the user's and the project's commands, as the runtime lists them before MCP servers are up."""
    files = command_files(user_folder, cwd, roots)
    listed = [entry(*builtin) for builtin in BUILTIN_MENU]
    return listed + [entry(f.name, f.description, None if f.refused else f.hint) for f in files]
