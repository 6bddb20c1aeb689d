"""What one turn does to the files in the session's roots: kept before each first change, seen when a command
(or any tool that can run code) changed them behind the edit tools' back, and summed up when the turn ends.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import anyio

from ...acp.schema import ContentToolCallContent, DiffContent, TextContent, ToolCallContent, ToolCallLocation
from ...kit.untrusted import is_inside
from .changes import Kind, Watch, prior_content
from .checkpoints import Changed, Checkpoints, Read
from .file_content import ABSENT, MAX_TAKEN_BYTES, TOO_LARGE, UNKNOWN, Content, of_bytes, size_text, take
from .file_notes import changed_files_note
from .files import Files, looks_binary

log = logging.getLogger(__name__)

MAX_SHOWN_BYTES = 512 * 1024  # a changed file larger than this is listed, not shown as a diff
MAX_SHOWN_TOTAL = 4 * 1024 * 1024  # the diffs of one call's changes, together; past it, files are listed
# What one turn holds of the files commands changed (their contents before and after, for the diffs, the summary
# and undo): each is read up to `MAX_TAKEN_BYTES`, and past this total the rest are listed with their size. A
# command that writes a thousand files of 4 MB must not cost 4 GB of memory.
MAX_TURN_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class CommandChange:
    """A file a command changed: what it held before (`UNKNOWN`: not known) and after."""

    path: str
    kind: Kind
    before: Content
    after: Content


def _roots_for(path: str, roots: Sequence[str]) -> Sequence[str] | None:
    """Where `path` must lead: into the roots when it is named inside one; a path outside them (an edit the user
    approved there) to a regular file anywhere."""
    named = [os.path.abspath(root) for root in roots]
    return roots if is_inside(os.path.abspath(path), named) else None


def reader(roots: Sequence[str]) -> Read:
    """How the turn's end and undo read a file now: `file_content.take`, in a worker thread."""

    async def read(path: str) -> Content:
        return await anyio.to_thread.run_sync(lambda: take(path, _roots_for(path, roots)))

    return read


class TurnFiles:
    def __init__(self, checkpoints: Checkpoints, files: Files, roots: Sequence[str]) -> None:
        self._checkpoints = checkpoints
        self._files = files
        self._roots = list(roots)
        self._read = reader(self._roots)
        self._taken = 0  # bytes of changed files held this turn
        self._last: dict[str, Content] = {}  # what each file the turn touched holds now, as far as we know
        self._tops: dict[str, str | None] = {}  # each root's git top folder, asked once a turn
        self.problems: dict[str, str] = {}  # root -> why git could not say what the turn's commands changed there

    def begin(self, messages_before: int, compactions: int = 0) -> None:
        self._checkpoints.begin_turn(messages_before, compactions)
        self._last = {}
        self._taken = 0
        self._tops = {}  # a command may have made or removed a repository since
        self.problems = {}
        self.conversation = False  # set once the model is asked: a command alone is not a turn to rewind

    def discard_unless_conversation(self) -> None:
        if not self.conversation:
            self._checkpoints.discard_turn()

    def before_edit(self, path: str, old_text: str | None, new_text: str | None) -> None:
        """An edit tool is about to write (or delete) `path`."""
        self._checkpoints.before_change(path, of_bytes(None if old_text is None else old_text.encode("utf-8")))
        self._last[path] = of_bytes(None if new_text is None else new_text.encode("utf-8"))
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
            if seen.path in self._last:
                before = self._last[seen.path]
            elif seen.kind == "created":
                before = ABSENT
            elif seen.prior_in_git:
                before = await prior_content(look, seen.path, *self._cap())
                self._taken += len(before.data or b"")
            else:
                before = UNKNOWN
            self._checkpoints.before_change(seen.path, before)
            after = await self._take(seen.path)
            self._last[seen.path] = after
            self._checkpoints.after_change(seen.path, after)
            found.append(CommandChange(seen.path, seen.kind, before, after))
        return found

    async def end(self) -> list[Changed]:
        # one file at a time, let go once counted: past `MAX_TURN_BYTES` too
        return await self._checkpoints.end_turn(self._read)

    def _cap(self) -> tuple[int, str]:
        """How much of the next file may be read, and what to say of one past it."""
        left = MAX_TURN_BYTES - self._taken
        if left >= MAX_TAKEN_BYTES:
            return MAX_TAKEN_BYTES, TOO_LARGE
        return max(left, 0), f"not read, this turn holds {size_text(MAX_TURN_BYTES)} of changed files already"

    async def _take(self, path: str) -> Content:
        cap, past_cap = self._cap()
        content = await anyio.to_thread.run_sync(lambda: take(path, _roots_for(path, self._roots), cap, past_cap))
        self._taken += len(content.data or b"")
        return content


def _shown_text(content: Content) -> str | None:
    """The text a diff shows of one side (None: no file); ValueError when it cannot be shown, saying why."""
    if not content.exists:
        return None
    if content.data is None:
        raise ValueError(content.withheld)
    if len(content.data) > MAX_SHOWN_BYTES:
        raise ValueError(f"{size_text(len(content.data))}: too large to show")
    if looks_binary(content.data):
        raise ValueError(f"binary, {size_text(len(content.data))}: not shown")
    return content.data.decode("utf-8", "replace")


def change_content(changes: Sequence[CommandChange]) -> list[ToolCallContent]:
    """How the editor shows a command's changes: a diff per file where the texts are known, else a line."""
    content: list[ToolCallContent] = []
    shown = 0
    for change in changes:
        try:
            new = _shown_text(change.after)  # what it is now says most, when it cannot be shown
            old = _shown_text(change.before)
            shown += len(new or "") + len(old or "")
            if shown > MAX_SHOWN_TOTAL:
                raise ValueError(f"not shown: this call's diffs passed {size_text(MAX_SHOWN_TOTAL)}")
        except ValueError as exc:
            content.append(ContentToolCallContent(content=TextContent(text=f"{change.path}: {change.kind} ({exc})")))
            continue
        content.append(DiffContent(path=change.path, old_text=old, new_text=new or ""))
    return content


def change_locations(changes: Sequence[CommandChange]) -> list[ToolCallLocation]:
    return [ToolCallLocation(path=change.path) for change in changes if change.kind != "deleted"]


def for_model(changes: Sequence[CommandChange], display: Callable[[str], str]) -> str:
    """The line the model reads after the call's own answer: each file, and what was not read of it."""

    def entry(change: CommandChange) -> str:
        withheld = change.after.withheld
        return f"{display(change.path)} ({change.kind}{'' if withheld is None else '; ' + withheld})"

    return f"Files changed by this call: {', '.join(entry(change) for change in changes)}."


def turn_summary(changes: Sequence[Changed], display: Callable[[str], str], problems: Sequence[str] = ()) -> str:
    """The turn's note: what it changed, and anything that kept the agent from seeing every change."""
    return changed_files_note(changes, display, problems)
