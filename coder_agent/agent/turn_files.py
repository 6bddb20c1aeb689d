"""What one turn does to the files in the session's roots: kept before each first change, seen when a command
(or any tool that can run code) changed them behind the edit tools' back, and summed up when the turn ends.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import anyio

from ..acp.schema import DiffContent, ToolCallContent, ToolCallLocation
from .changes import Kind, Watch, prior_content
from .checkpoints import Changed, Checkpoints, summary_text
from .files import Files
from .tools.base import text_content

log = logging.getLogger(__name__)

MAX_SHOWN_BYTES = 512 * 1024  # a changed file larger than this is listed, not shown as a diff


@dataclass(frozen=True)
class CommandChange:
    """A file a command changed: what it held before (None: did not exist, or not known) and after."""

    path: str
    kind: Kind
    before: bytes | None
    after: bytes | None
    before_known: bool


def _text(data: bytes | None) -> str | None:
    if data is None:
        return None
    if b"\0" in data[:8192] or len(data) > MAX_SHOWN_BYTES:
        raise ValueError
    return data.decode("utf-8", "replace")


async def read_bytes(path: str) -> bytes | None:
    """The file's bytes on disk now, or None when there is no such file."""
    try:
        return await anyio.Path(path).read_bytes()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None


class TurnFiles:
    def __init__(self, checkpoints: Checkpoints, files: Files, roots: Sequence[str]) -> None:
        self._checkpoints = checkpoints
        self._files = files
        self._roots = list(roots)
        self._last: dict[str, bytes | None] = {}  # what each file the turn touched holds now, as far as we know
        self._tops: dict[str, str | None] = {}  # each root's git top folder, asked once a turn
        self.problems: dict[str, str] = {}  # root -> why git could not say what the turn's commands changed there

    def begin(self, messages_before: int, compactions: int = 0) -> None:
        self._checkpoints.begin_turn(messages_before, compactions)
        self._last = {}
        self._tops = {}  # a command may have made or removed a repository since
        self.problems = {}
        self.conversation = False  # set once the model is asked: a command alone is not a turn to rewind

    def discard_unless_conversation(self) -> None:
        if not self.conversation:
            self._checkpoints.discard_turn()

    def before_edit(self, path: str, old_text: str | None, new_text: str | None) -> None:
        """An edit tool is about to write (or delete) `path`."""
        self._checkpoints.before_change(path, None if old_text is None else old_text.encode("utf-8"))
        self._last[path] = None if new_text is None else new_text.encode("utf-8")
        self._checkpoints.after_change(path, self._last[path])

    async def watch(self) -> Watch:
        watch = Watch(self._roots, self._tops)
        await watch.start()
        return watch

    async def seen_by(self, watch: Watch) -> list[CommandChange]:
        """What changed since `watch` started, each kept in the turn's checkpoint first."""
        found: list[CommandChange] = []
        seen_all = await watch.changes()
        self.problems.update(watch.problems)
        for look, seen in seen_all:
            before_known = True
            if seen.path in self._last:
                before = self._last[seen.path]
            elif seen.kind == "created":
                before = None
            elif seen.prior_in_git:
                before = await prior_content(look, seen.path)
                before_known = before is not None
            else:
                before, before_known = None, False
            self._checkpoints.before_change(seen.path, before, known=before_known)
            after = await read_bytes(seen.path)
            self._last[seen.path] = after
            self._checkpoints.after_change(seen.path, after)
            found.append(CommandChange(seen.path, seen.kind, before, after, before_known))
        return found

    async def end(self) -> list[Changed]:
        return await self._checkpoints.end_turn(read_bytes)


def change_content(changes: Sequence[CommandChange]) -> list[ToolCallContent]:
    """How the editor shows a command's changes: a diff per file where the texts are known, else a line."""
    content: list[ToolCallContent] = []
    for change in changes:
        try:
            if not change.before_known:
                raise ValueError
            old, new = _text(change.before), _text(change.after)
        except ValueError:
            note = "its content before is not known" if not change.before_known else "binary or too large to show"
            content.append(text_content(f"{change.path}: {change.kind} ({note})"))
            continue
        content.append(DiffContent(path=change.path, old_text=old, new_text=new or ""))
    return content


def change_locations(changes: Sequence[CommandChange]) -> list[ToolCallLocation]:
    return [ToolCallLocation(path=change.path) for change in changes if change.kind != "deleted"]


def for_model(changes: Sequence[CommandChange], display: Callable[[str], str]) -> str:
    """The line the model reads after the call's own answer."""
    listed = ", ".join(f"{display(change.path)} ({change.kind})" for change in changes)
    return f"Files changed by this call: {listed}."


def turn_summary(changes: Sequence[Changed], display: Callable[[str], str], problems: Sequence[str] = ()) -> str:
    """The turn's note: what it changed, and anything that kept the agent from seeing every change."""
    text = summary_text(changes, display) if changes else ""
    if problems:
        text += "\n\n" * bool(text) + "Not every change could be seen: " + "; ".join(problems) + "."
    return text
