"""A checkpoint per turn: every file a turn changed, what it held before, and what the turn left.

Before a turn first changes a file (through an edit tool or a command), the file's prior content and mode are
kept in the session store: from the edit's own old text, or from the snapshot taken before the command
(`changes.py`), tracked by git or not. What the turn itself left is recorded as soon as it is known: after an
edit is written, after a command, read back from the disk (so an undo after a crash can still check it, and a
change someone makes later is never taken for the turn's). When someone else changes a file between two of the
turn's own changes (the user, while the model was thinking), the entry is marked: undo leaves it alone.

Files larger than `max_bytes` are not kept, and said so; a link is kept as its target. Undoing is `undo.py`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio

from ...store.base import StoreError
from ...store.checkpoints import SqliteCheckpoints, TurnRecord, Version, content_hash
from .file_content import MAX_TAKEN_BYTES, Content, size_text
from .line_counts import counts

log = logging.getLogger(__name__)

MAX_KEPT_BYTES = MAX_TAKEN_BYTES  # a file larger than what is read of it could not be kept anyway

Read = Callable[[str], Awaitable[Content]]  # what a file holds now, as far as it may be read


@dataclass(frozen=True)
class Changed:
    """One file a turn changed, for the per-turn summary."""

    path: str
    kind: str  # "created", "modified", "deleted"
    added: int | None  # lines; None when they were not counted (`note` says why)
    removed: int | None
    note: str | None = None
    modes: tuple[int, int] | None = None  # (before, after) when the turn changed the file's mode


def version_of(content: Content, max_bytes: int = MAX_KEPT_BYTES) -> tuple[Version, bytes | None]:
    """A file's state as a checkpoint records it, and the bytes to keep for it (None: nothing to keep)."""
    if not content.exists:
        return Version("absent"), None
    if content.link is not None:
        target = content.link.encode("utf-8", "surrogateescape")
        return Version("link", content_hash(target)), target
    data = content.data
    if data is None or len(data) > max_bytes:
        size = content.size if data is None else len(data)
        if data is None and (size is None or size <= max_bytes):  # a device, not read, not known ...
            return Version("not_kept", note=content.withheld, mode=content.mode), None
        limit = f"the limit is {max_bytes // 1024 // 1024} MB"
        return Version("not_kept", note=f"too large to keep ({size_text(size or 0)}; {limit})", mode=content.mode), None
    return Version("kept", content_hash(data), mode=content.mode), data


class Checkpoints:
    """One session's checkpoints (nothing is kept when the store is unavailable: said once in the log)."""

    def __init__(self, store: SqliteCheckpoints | None, session_id: str, max_bytes: int = MAX_KEPT_BYTES) -> None:
        self.store = store
        self.session_id = session_id
        self.max_bytes = max_bytes
        self.turn: int | None = None
        self._touched: list[str] = []
        self._befores: dict[str, Content] = {}  # this turn's prior contents (for the summary)
        self._afters: dict[str, Content] = {}  # what the turn left, as far as it knows
        self._confirmed: set[str] = set()  # files whose `after` was read back once the turn's change was made

    @property
    def home(self) -> Path | None:
        """The data folder (where the shadows of snapshots are kept), when there is a store."""
        return None if self.store is None else self.store.home

    def begin_turn(self, messages_before: int, compactions: int = 0) -> None:
        self.turn, self._touched, self._befores, self._afters, self._confirmed = None, [], {}, {}, set()
        if self.store is None:
            return
        try:
            updates = self.store.update_count(self.session_id)
            self.turn = self.store.begin_turn(self.session_id, messages_before, updates, compactions)
        except StoreError as exc:
            log.error("no checkpoint for this turn: %s", exc)

    def _record(self, what: str, path: str, content: Content) -> None:
        if self.store is None or self.turn is None:
            return
        version, data = version_of(content, self.max_bytes)
        try:
            if data is not None:
                self.store.keep(data)
            if what == "before":
                self.store.record_before(self.session_id, self.turn, path, version)
            else:
                self.store.record_after(self.session_id, self.turn, path, version)
        except StoreError as exc:
            log.error("checkpoint of %s not kept: %s", path, exc)

    def before_change(self, path: str, before: Content) -> None:
        """`path` is about to change (or just did): `before` is what it held before. Only the first call of a
        turn for a path counts."""
        if path in self._befores:
            return
        self._befores[path] = before
        self._touched.append(path)
        self._record("before", path, before)

    def after_change(self, path: str, after: Content, confirmed: bool = True) -> None:
        """What the turn left in `path`: read back from the disk (`confirmed`), or what it meant to write."""
        if path not in self._befores:
            return
        self._afters[path] = after
        if confirmed:
            self._confirmed.add(path)
        else:
            self._confirmed.discard(path)
        self._record("after", path, after)

    def touched(self) -> list[str]:
        """The files this turn changed so far, in order."""
        return list(self._touched)

    def left(self, path: str) -> Content | None:
        """What this turn left in `path`, if it changed it."""
        return self._afters.get(path)

    def mark_foreign(self, path: str) -> None:
        """Someone else changed `path` since the turn's last change to it: undo must leave it as it is."""
        log.info("%s changed during the turn, not by it", path)
        if self.store is not None and self.turn is not None:
            try:
                self.store.mark_foreign(self.session_id, self.turn, path)
            except StoreError as exc:
                log.error("checkpoint of %s not marked: %s", path, exc)

    def carried(self, notes: Sequence[dict[str, object]]) -> None:
        """The notes this turn's prompt brought the model (a rewind past it hands them on)."""
        if self.store is not None and self.turn is not None and notes:
            try:
                self.store.set_notes(self.session_id, self.turn, json.dumps(list(notes)))
            except StoreError as exc:
                log.error("notes of turn %s not kept: %s", self.turn, exc)

    async def end_turn(self, read: Read) -> list[Changed]:
        """The summary of what the turn changed: each file as it was before and as the turn left it (a file the
        turn meant to write but whose write was never confirmed is read back now)."""
        summary: list[Changed] = []
        for path in self._touched:
            before = self._befores[path]
            after = self._afters.get(path)
            if after is None or path not in self._confirmed or _held_back(after, self.max_bytes):
                # Never read back, or not read within the turn's budget: read now (one at a time, let go once
                # counted), and kept as what the turn left.
                after = await read(path)
                self._record("after", path, after)
            moded: tuple[int, int] | None = None
            if before.mode is not None and after.mode is not None and before.mode != after.mode:
                moded = (before.mode, after.mode)
            if after.same_as(before) and moded is None:
                continue
            kind = "created" if not before.exists else "deleted" if not after.exists else "modified"
            if before.known and after.known and before.link is None and after.link is None:
                # Off the event loop: even bounded (`line_counts`), counting 4 MB a side takes a second or two.
                added, removed = await anyio.to_thread.run_sync(counts, before.data, after.data)
                summary.append(Changed(path, kind, added, removed, modes=moded))
            else:
                note = after.withheld if not after.known or after.link else before.withheld
                summary.append(Changed(path, kind, None, None, note, moded))
        return summary

    def turn_records(self) -> list[TurnRecord]:
        """Every recorded turn of the session, oldest first."""
        return [] if self.store is None else self.store.turns(self.session_id)

    def discard_turn(self) -> None:
        """The prompt was no conversation turn (a command, or it failed before the model saw it): no record."""
        if self.store is None or self.turn is None or self._touched:
            return
        try:
            self.store.forget_turns_from(self.session_id, self.turn)
        except StoreError as exc:
            log.error("could not drop the record of turn %s: %s", self.turn, exc)
        self.turn = None

    def forget_from(self, turn: int, updates_keep: int, updates_upto: int | None = None) -> None:
        """The conversation goes back to before `turn`: its records go, and its replay log from `updates_keep`
        up to `updates_upto` (the prompt that asked for this stays)."""
        if self.store is None:
            return
        self.store.drop_updates(self.session_id, updates_keep, updates_upto)
        self.store.forget_turns_from(self.session_id, turn)


def _held_back(content: Content, max_bytes: int) -> bool:
    """A file small enough to keep that was not read (the turn held too much already)."""
    small = content.size is not None and content.size <= max_bytes
    return content.exists and content.data is None and content.link is None and small


def what_changed(change: Changed) -> str:
    """A changed file's `+added -removed` lines (or why they were not counted), and its mode change if any."""
    text = f"+{change.added} -{change.removed}" if change.note is None else change.note
    if change.modes is not None:
        mode = f"mode {change.modes[0]:o} -> {change.modes[1]:o}"
        text = mode if change.added == change.removed == 0 else f"{text}, {mode}"
    return text
