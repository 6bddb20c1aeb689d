"""A checkpoint per turn: every file a turn changed, what it held before, and undoing turns.

Before a turn first changes a file (through an edit tool or a command), the file's prior content is kept in the
session store; at the end of the turn its new state is recorded too, so `undo` can tell a file the user (or
anyone) changed since from one it may safely put back. Files larger than `max_bytes` are not kept, and a file a
command changed without the agent knowing its earlier content cannot be restored: both are said, never skipped
silently. A file's content is what `file_content` took of it: past the read cap (or a link, or no regular file)
there are no bytes, only what it is, and the summary says that instead of line counts.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import anyio

from ...store.base import StoreError
from ...store.checkpoints import FileEntry, SqliteCheckpoints, TurnRecord, Version, content_hash
from .file_content import MAX_TAKEN_BYTES, Content, size_text
from .line_counts import counts

log = logging.getLogger(__name__)

MAX_KEPT_BYTES = MAX_TAKEN_BYTES  # a file larger than what is read of it could not be kept anyway

Read = Callable[[str], Awaitable[Content]]  # what a file holds now, as far as it may be read
Write = Callable[[str, bytes | None], Awaitable[None]]  # put bytes in a file, or delete it (None)


@dataclass(frozen=True)
class Changed:
    """One file a turn changed, for the per-turn summary."""

    path: str
    kind: str  # "created", "modified", "deleted"
    added: int | None  # lines; None when they were not counted (`note` says why)
    removed: int | None
    note: str | None = None


@dataclass
class UndoReport:
    restored: list[str] = field(default_factory=list)  # put back as they were before the turn(s)
    deleted: list[str] = field(default_factory=list)  # created by the turn(s), removed again
    changed_since: list[str] = field(default_factory=list)  # changed after the turn: left alone (unless forced)
    not_kept: list[str] = field(default_factory=list)  # their earlier content was not kept: left alone
    turns: list[int] = field(default_factory=list)

    @property
    def nothing(self) -> bool:
        return not (self.restored or self.deleted or self.changed_since or self.not_kept)

    def for_model(self) -> str:
        """What the model is told, so it does not rely on changes that are gone."""
        parts = []
        if self.restored or self.deleted:
            undone = ", ".join([*self.restored, *(f"{path} (deleted)" for path in self.deleted)])
            parts.append(f"The user undid the file changes of the last turn(s): {undone}.")
        if self.changed_since:
            parts.append(f"Not undone, changed since: {', '.join(self.changed_since)}.")
        if self.not_kept:
            parts.append(f"Not undone, their earlier content was not kept: {', '.join(self.not_kept)}.")
        return " ".join(parts) or "There were no file changes to undo."


class Checkpoints:
    """One session's checkpoints (nothing is kept when the store is unavailable: said once in the log)."""

    def __init__(self, store: SqliteCheckpoints | None, session_id: str, max_bytes: int = MAX_KEPT_BYTES) -> None:
        self._store = store
        self._session_id = session_id
        self._max_bytes = max_bytes
        self.turn: int | None = None
        self._touched: list[str] = []
        self._befores: dict[str, Content] = {}  # this turn's prior contents (for the summary)

    def begin_turn(self, messages_before: int, compactions: int = 0) -> None:
        self.turn, self._touched, self._befores = None, [], {}
        if self._store is None:
            return
        try:
            updates = self._store.update_count(self._session_id)
            self.turn = self._store.begin_turn(self._session_id, messages_before, updates, compactions)
        except StoreError as exc:
            log.error("no checkpoint for this turn: %s", exc)

    def _version(self, content: Content) -> Version:
        if not content.exists:
            return Version("absent")
        data = content.data
        if data is None or len(data) > self._max_bytes:
            size = content.size if data is None else len(data)
            if data is None and (size is None or size <= self._max_bytes):  # a link, a device, not known ...
                return Version("not_kept", note=content.withheld)
            limit = f"the limit is {self._max_bytes // 1024 // 1024} MB"
            return Version("not_kept", note=f"too large to keep ({size_text(size or 0)}; {limit})")
        assert self._store is not None
        return Version("kept", self._store.keep(data))

    def before_change(self, path: str, before: Content) -> None:
        """`path` is about to change (or just did): `before` is what it held before (`UNKNOWN`: not known).

        Only the first call of a turn for a path counts.
        """
        if path in self._befores:
            return
        self._befores[path] = before
        self._touched.append(path)
        if self._store is None or self.turn is None:
            return
        version = self._version(before)
        try:
            self._store.record_before(self._session_id, self.turn, path, version)
        except StoreError as exc:
            log.error("checkpoint of %s not kept: %s", path, exc)

    def after_change(self, path: str, after: Content) -> None:
        """What `path` holds now, as far as the turn knows: kept at once, so an undo after a crash can check it."""
        if self._store is None or self.turn is None or path not in self._befores:
            return
        try:
            self._store.record_after(self._session_id, self.turn, path, self._version(after))
        except StoreError as exc:
            log.error("checkpoint of %s not kept: %s", path, exc)

    def changed_this_turn(self, path: str) -> bool:
        return path in self._befores

    async def end_turn(self, read: Read) -> list[Changed]:
        """Record the files' states at the end of the turn; the summary of what it changed."""
        summary: list[Changed] = []
        for path in self._touched:
            after = await read(path)
            before = self._befores[path]
            if after.same_as(before):
                continue
            kind = "created" if not before.exists else "deleted" if not after.exists else "modified"
            if before.known and after.known:
                # Off the event loop: even bounded (`line_counts`), counting 4 MB a side takes a second or two.
                added, removed = await anyio.to_thread.run_sync(counts, before.data, after.data)
                summary.append(Changed(path, kind, added, removed))
            else:
                note = after.withheld if not after.known else before.withheld
                summary.append(Changed(path, kind, None, None, note))
            if self._store is not None and self.turn is not None:
                try:
                    self._store.record_after(self._session_id, self.turn, path, self._version(after))
                except StoreError as exc:
                    log.error("checkpoint of %s not kept: %s", path, exc)
        return summary

    def _undoable(self) -> list[int]:
        """The session's turns that changed files and are not undone yet, oldest first."""
        if self._store is None:
            return []
        turns = self._store.turns(self._session_id)
        return [t.turn for t in turns if not t.undone and self._store.entries(self._session_id, t.turn)]

    async def undo(
        self, read: Read, write: Write, turns: int = 1, force: bool = False, numbers: Sequence[int] | None = None
    ) -> UndoReport:
        """Put back the files the last `turns` turns that changed files changed (or the turns `numbers`)."""
        report = UndoReport()
        if self._store is None:
            return report
        undoable = self._undoable()
        chosen = [turn for turn in undoable if turn in numbers] if numbers is not None else undoable[-turns:]
        restore: dict[str, FileEntry] = {}
        latest: dict[str, FileEntry] = {}
        for turn in chosen:  # oldest first: the oldest "before" wins, the newest "after" is what must be there now
            for entry in self._store.entries(self._session_id, turn):
                restore.setdefault(entry.path, entry)
                latest[entry.path] = entry
        for path, entry in sorted(restore.items()):
            await self._restore(path, entry.before, latest[path].after, read, write, force, report)
        if not report.changed_since:  # else the turns stay, for an undo that is told to overwrite those files
            self._store.mark_undone(self._session_id, chosen)
        report.turns = chosen
        return report

    async def _restore(
        self, path: str, before: Version, after: Version, read: Read, write: Write, force: bool, report: UndoReport
    ) -> None:
        assert self._store is not None
        if before.state == "not_kept":
            report.not_kept.append(path)
            return
        now = await read(path)
        found: str | None
        if now.exists and now.data is None:
            found = "withheld"  # past the cap, a link ...: it cannot be what was kept
        else:
            found = content_hash(now.data) if now.data is not None else None
        expected = None if after.state == "absent" else after.hash
        if not force and (after.state == "not_kept" or found != expected):
            report.changed_since.append(path)
            return
        if before.state == "absent":
            if now.exists:
                await write(path, None)
                report.deleted.append(path)
            return
        data = self._store.blob(before.hash or "")
        if data is None:
            report.not_kept.append(path)
            return
        await write(path, data)
        report.restored.append(path)

    def turn_records(self) -> list[TurnRecord]:
        """Every recorded turn of the session, oldest first."""
        return [] if self._store is None else self._store.turns(self._session_id)

    def discard_turn(self) -> None:
        """The prompt was no conversation turn (a command, or it failed before the model saw it): no record."""
        if self._store is None or self.turn is None or self._touched:
            return
        try:
            self._store.forget_turns_from(self._session_id, self.turn)
        except StoreError as exc:
            log.error("could not drop the record of turn %s: %s", self.turn, exc)
        self.turn = None

    def forget_from(self, turn: int, updates_keep: int) -> None:
        """The conversation goes back to before `turn`: its records and its replay log go."""
        if self._store is None:
            return
        self._store.truncate_updates(self._session_id, updates_keep)
        self._store.forget_turns_from(self._session_id, turn)


def summary_text(changes: Sequence[Changed], display: Callable[[str], str]) -> str:
    """The per-turn summary shown to the user: each file with its +/- line counts."""
    width = max((len(display(c.path)) for c in changes), default=0)
    lines = [
        f"{display(c.path):<{width}}  {_what(c)}" + (f"  ({c.kind})" if c.kind != "modified" else "") for c in changes
    ]
    return f"Changed {len(changes)} file{'s' if len(changes) != 1 else ''}:\n" + "\n".join(lines)


def _what(change: Changed) -> str:
    return f"+{change.added} -{change.removed}" if change.note is None else change.note
