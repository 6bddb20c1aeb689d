"""Undoing turns: each file a turn changed put back as it was before, unless someone changed it since.

Turns are undone newest first, file by file, as separate undos would be: a file is put back past a turn only
when it is now exactly what that turn left (content, and mode where it was recorded), so an edit the user made
between two turns stops the undo there for that file, and one made during a turn (marked by `checkpoints`)
stops it at that turn. Such files are left as they are and named; `force` overwrites them. A file outside the
session's folders now, or one that became a link, is never written (`restore.Restore` refuses it, force or not).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from ...store.checkpoints import FileEntry, Version
from .checkpoints import Checkpoints, version_of
from .restore import Restore

log = logging.getLogger(__name__)


@dataclass
class UndoReport:
    restored: list[str] = field(default_factory=list)  # put back as they were before the turn(s)
    deleted: list[str] = field(default_factory=list)  # created by the turn(s), removed again
    changed_since: list[str] = field(default_factory=list)  # changed after the turn: left alone (unless forced)
    not_kept: list[str] = field(default_factory=list)  # their earlier content was not kept: left alone
    refused: list[tuple[str, str]] = field(default_factory=list)  # (path, why): never written, force or not
    turns: list[int] = field(default_factory=list)

    @property
    def nothing(self) -> bool:
        return not (self.restored or self.deleted or self.changed_since or self.not_kept or self.refused)

    @property
    def left(self) -> list[str]:
        """Every file left as it is, whatever the reason."""
        return [*self.changed_since, *self.not_kept, *(path for path, _ in self.refused)]

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
        if self.refused:
            parts.append(f"Not undone, not writable safely: {', '.join(path for path, _ in self.refused)}.")
        return " ".join(parts) or "There were no file changes to undo."


def same(now: Version, expected: Version) -> bool:
    """Whether a file is exactly what a checkpoint says (a mode is compared where both are known)."""
    if now.state != expected.state or now.state == "not_kept":
        return False
    if now.state == "absent":
        return True
    if now.hash != expected.hash:
        return False
    return now.mode is None or expected.mode is None or now.mode == expected.mode


def undoable(checkpoints: Checkpoints) -> list[int]:
    """The session's turns that changed files and are not undone yet, oldest first."""
    store = checkpoints.store
    if store is None:
        return []
    turns = store.turns(checkpoints.session_id)
    return [
        t.turn
        for t in turns
        if not t.undone and any(not e.undone for e in store.entries(checkpoints.session_id, t.turn))
    ]


async def undo(
    checkpoints: Checkpoints,
    restore: Restore,
    turns: int = 1,
    force: bool = False,
    numbers: Sequence[int] | None = None,
) -> UndoReport:
    """Put back the files the last `turns` turns that changed files changed (or the turns `numbers`)."""
    report = UndoReport()
    store = checkpoints.store
    if store is None:
        return report
    pending = undoable(checkpoints)
    chosen = [turn for turn in pending if turn in numbers] if numbers is not None else pending[-turns:]
    chains: dict[str, list[tuple[int, FileEntry]]] = {}
    for turn in reversed(chosen):  # newest first
        for entry in store.entries(checkpoints.session_id, turn):
            if not entry.undone:
                chains.setdefault(entry.path, []).append((turn, entry))
    done: list[tuple[int, str]] = []
    for path in sorted(chains):
        done += await _undo_file(checkpoints, restore, path, chains[path], force, report)
    store.mark_entries_undone(checkpoints.session_id, done)
    if not report.changed_since and not report.refused:  # else they stay, for an undo told to overwrite those
        store.mark_undone(checkpoints.session_id, chosen)
    report.turns = chosen
    return report


async def _undo_file(
    checkpoints: Checkpoints,
    restore: Restore,
    path: str,
    chain: list[tuple[int, FileEntry]],
    force: bool,
    report: UndoReport,
) -> list[tuple[int, str]]:
    """Undo one file's changes, newest turn first; the (turn, path) entries undone."""
    why = restore.refusal(path)
    if why is not None:
        report.refused.append((path, why))
        return []
    now = await restore.now(path)
    state, _ = version_of(now, checkpoints.max_bytes)
    if now.link is not None and not same(state, chain[0][1].after):
        report.refused.append((path, f"it is a link to {now.link} now: not written through"))
        return []
    target: Version | None = None
    undone: list[int] = []
    for turn, entry in chain:
        if entry.before.state == "not_kept":
            report.not_kept.append(path)
            break
        if not force and (entry.foreign or not same(state, entry.after)):
            report.changed_since.append(path)
            break
        target = state = entry.before
        undone.append(turn)
    if target is None:
        return []
    store = checkpoints.store
    data = None if target.state == "absent" or store is None else store.blob(target.hash or "")
    if target.state != "absent" and data is None:
        report.not_kept.append(path)
        return []
    try:
        await restore.put(path, target, data, now)
    except OSError as exc:
        report.refused.append((path, str(exc) if exc.strerror is None else f"{exc.strerror}: not written"))
        return []
    if target.state == "absent":
        if now.exists:
            report.deleted.append(path)
    else:
        report.restored.append(path)
    return [(turn, path) for turn in undone]
