"""What one turn does to the files in the session's roots: kept before each first change, seen when a command
(or any tool that can run code) changed them behind the edit tools' back, and summed up when the turn ends.
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio

from ...acp.schema import ContentToolCallContent, DiffContent, TextContent, ToolCallContent, ToolCallLocation
from ...kit.untrusted import is_inside
from .changes import Kind, Seen, Watch, content_of, warm_up
from .checkpoints import Changed, Checkpoints, Read
from .file_content import ABSENT, MAX_TAKEN_BYTES, TOO_LARGE, Content, of_bytes, size_text, take
from .file_notes import changed_files_note
from .files import Files, looks_binary
from .snapshot_upkeep import maintain
from .snapshots import Side, repo_of

log = logging.getLogger(__name__)

MAX_SHOWN_BYTES = 512 * 1024  # a changed file larger than this is listed, not shown as a diff
MAX_SHOWN_TOTAL = 4 * 1024 * 1024  # the diffs of one call's changes, together; past it, files are listed
# What one turn holds of the files commands changed (their contents before and after, for the diffs, the summary
# and undo): each is read up to `MAX_TAKEN_BYTES`, and past this total the rest are listed with their size. A
# command that writes a thousand files of 4 MB must not cost 4 GB of memory.
MAX_TURN_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class CommandChange:
    """A file a command changed: what it held before and after."""

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
    """How the turn's end reads a file now: `file_content.take` (a link as the link), in a worker thread."""

    async def read(path: str) -> Content:
        return await anyio.to_thread.run_sync(lambda: take(path, _roots_for(path, roots), follow=False))

    return read


def blob_id(data: bytes) -> str:
    """git's name for these bytes as a file's content (to compare with a snapshot's)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _matches(side: Side, left: Content) -> bool:
    """Whether a snapshot's file is (as far as can be told) what the turn left there."""
    if not left.exists:
        return side.state == "absent"
    if left.link is not None:
        return side.state == "link" and side.oid == blob_id(os.fsencode(left.link))
    if left.data is None:
        return side.state not in ("absent", "link")  # past the cap: its content cannot be compared
    if side.state != "file" or side.oid != blob_id(left.data):
        return False
    return left.mode is None or side.mode is None or left.mode == side.mode


class TurnFiles:
    def __init__(self, checkpoints: Checkpoints, files: Files, roots: Sequence[str]) -> None:
        self._checkpoints = checkpoints
        self._files = files
        self._roots = list(roots)
        self._read = reader(self._roots)
        self._taken = 0  # bytes of changed files held this turn
        self._foreign: set[str] = set()  # files someone else changed since the turn's last change to them
        self._checked: dict[str, object] = {}  # root -> the snapshot last checked for such changes
        self._snapshotted: dict[str, Path] = {}  # roots snapshotted this turn, and where their shadows are
        self.problems: dict[str, str] = {}  # root -> why the turn's changes there could not all be seen

    def begin(self, messages_before: int, compactions: int = 0) -> None:
        self._checkpoints.begin_turn(messages_before, compactions)
        warm_up(self._roots, self._checkpoints.home)
        self._taken = 0
        self._foreign = set()
        self._checked = {}
        self._snapshotted = {}
        self.problems = {}
        self.conversation = False  # set once the model is asked: a command alone is not a turn to rewind

    def discard_unless_conversation(self) -> None:
        if not self.conversation:
            self._checkpoints.discard_turn()

    def before_edit(self, path: str, old_text: str | None, new_text: str | None) -> None:
        """An edit tool is about to write (or delete) `path`: its old text (what the tool read) is kept first,
        with the file's mode; what it means to write stands as the turn's until the write is read back."""
        left = self._checkpoints.left(path)
        if left is not None and old_text is not None and not left.same_as(of_bytes(old_text.encode("utf-8"))):
            self._mark_foreign(path)  # the user changed it since this turn last did
        mode = _mode(path)
        before = ABSENT if old_text is None else of_bytes(old_text.encode("utf-8"))
        self._checkpoints.before_change(path, Content(before.data, before.exists, before.size, before.withheld, mode))
        after = of_bytes(None if new_text is None else new_text.encode("utf-8"))
        self._checkpoints.after_change(path, after, confirmed=False)

    async def after_edit(self, path: str) -> None:
        """An edit tool wrote (or deleted) `path`: what it left is read back."""
        self._checkpoints.after_change(path, await self._take(path))

    def _mark_foreign(self, path: str) -> None:
        if path not in self._foreign:
            self._foreign.add(path)
            self._checkpoints.mark_foreign(path)

    async def watch(self) -> Watch:
        """Snapshot the roots before a command; a file this turn changed that differs now was changed by someone
        else in between."""
        watch = Watch(self._roots, self._checkpoints.home)
        await watch.start()
        self.problems.update(watch.problems)
        for root, snapshot in watch.before.items():
            if self._checked.get(root) is snapshot:
                continue
            self._checked[root] = snapshot
            mine = [path for path in self._touched() if path not in self._foreign]
            for path, side in (await watch.sides_now(root, mine)).items():
                left = self._checkpoints.left(path)
                if left is not None and not _matches(side, left):
                    self._mark_foreign(path)
        return watch

    def _touched(self) -> list[str]:
        return [path for path in self._checkpoints.touched() if self._checkpoints.left(path) is not None]

    async def seen_by(self, watch: Watch) -> list[CommandChange]:
        """What changed since `watch` started, each kept in the turn's checkpoint first."""
        found: list[CommandChange] = []
        try:
            seen_all = await watch.changes()
            self.problems.update(watch.problems)
            for root in dict.fromkeys(seen.root for seen in seen_all):
                mine = [seen for seen in seen_all if seen.root == root]
                # The turn's own earlier state of a file it changed already is what it left; others come from
                # the snapshot, read within the turn's budget.
                wanted = [seen.before for seen in mine if self._checkpoints.left(seen.path) is None]
                cap, past_cap = self._cap()
                blobs = await watch.contents(root, wanted, cap, max(MAX_TURN_BYTES - self._taken, 0))
                for seen in mine:
                    found.append(await self._seen(seen, blobs, past_cap))
        finally:
            watch.close()
        self._snapshotted.update((root, watch.home) for root in watch.after)
        # What this command left is what the snapshot after it holds: the next command's, when nothing happened
        # in between, needs no check.
        self._checked.update(watch.after)
        return found

    async def _seen(self, seen: Seen, blobs: dict[str, bytes | int], past_cap: str) -> CommandChange:
        left = self._checkpoints.left(seen.path)
        if left is not None:
            before = left
        else:
            before = content_of(seen.before, blobs, past_cap)
            self._taken += len(before.data or b"")
        self._checkpoints.before_change(seen.path, before)
        after = await self._take(seen.path)
        self._checkpoints.after_change(seen.path, after)
        if after.link is not None:  # shown as what it leads to, when that is a regular file inside the roots
            after = await self._take(seen.path, follow=True)
        return CommandChange(seen.path, seen.kind, before, after)

    async def end(self) -> list[Changed]:
        """The turn's summary (files read one at a time, let go once counted: past `MAX_TURN_BYTES` too); then the
        shadows of the roots it snapshotted are collected if they piled up objects."""
        changed = await self._checkpoints.end_turn(self._read)
        for root, home in self._snapshotted.items():
            await anyio.to_thread.run_sync(maintain, repo_of(home, root), abandon_on_cancel=True)
        return changed

    def _cap(self) -> tuple[int, str]:
        """How much of the next file may be read, and what to say of one past it."""
        left = MAX_TURN_BYTES - self._taken
        if left >= MAX_TAKEN_BYTES:
            return MAX_TAKEN_BYTES, TOO_LARGE
        return max(left, 0), f"not read, this turn holds {size_text(MAX_TURN_BYTES)} of changed files already"

    async def _take(self, path: str, follow: bool = False) -> Content:
        """What `path` holds now, within the turn's budget (a link as the link, unless `follow`)."""
        cap, past_cap = self._cap()
        roots = _roots_for(path, self._roots)
        content = await anyio.to_thread.run_sync(lambda: take(path, roots, cap, past_cap, follow=follow))
        self._taken += len(content.data or b"")
        return content


def _mode(path: str) -> int | None:
    """A regular file's permission bits (None: not one, or not there)."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else None


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
