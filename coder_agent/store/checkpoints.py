"""Checkpoints in the session store: what each turn changed, and the content its files had before.

Contents are kept once, addressed by their SHA-256 (`contents`), however many turns or sessions refer to them. Each
turn's entry for a file says what the file was before the turn first changed it (`before`) and what the turn left
(`after`), each a blob hash (a file's bytes, or a link's target) with the file's mode, or absent (the file did
not exist), or not kept (too large, or not read). An entry is marked when someone else changed the file between
two of the turn's own changes (`foreign`), and when it was undone. A turn also keeps the notes its prompt brought
the model (`notes`): a rewind past it hands them on. Contents no entry refers to go with `prune`.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .base import StoreError

SCHEMA = """
CREATE TABLE IF NOT EXISTS contents (
    hash TEXT PRIMARY KEY,
    data BLOB NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS checkpoints (
    session_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    path TEXT NOT NULL,
    before_state TEXT NOT NULL,
    before_hash TEXT,
    after_state TEXT NOT NULL DEFAULT 'unknown',
    after_hash TEXT,
    note TEXT,
    before_mode INTEGER,
    after_mode INTEGER,
    foreign_change INTEGER NOT NULL DEFAULT 0,
    undone INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (session_id, turn, path)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS turns (
    session_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    messages_before INTEGER NOT NULL,
    updates_before INTEGER NOT NULL,
    compactions_before INTEGER NOT NULL DEFAULT 0,
    undone INTEGER NOT NULL DEFAULT 0,
    notes TEXT,
    PRIMARY KEY (session_id, turn)
) WITHOUT ROWID;
"""
# Columns added since the first version of the tables: a store made before gets them when opened.
ADDED = {
    "checkpoints": (
        ("before_mode", "INTEGER"),
        ("after_mode", "INTEGER"),
        ("foreign_change", "INTEGER NOT NULL DEFAULT 0"),
        ("undone", "INTEGER NOT NULL DEFAULT 0"),
    ),
    "turns": (("notes", "TEXT"),),
}

State = Literal["kept", "absent", "not_kept", "link"]


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Version:
    """A file's content at one moment: kept (`hash` of its bytes), a link (`hash` of its target), absent (no such
    file), or not kept (`note` says why); `mode`: its permission bits, when known."""

    state: State
    hash: str | None = None
    note: str | None = None
    mode: int | None = None


@dataclass(frozen=True)
class FileEntry:
    path: str
    before: Version
    after: Version
    foreign: bool = False  # someone else changed it between two of the turn's own changes
    undone: bool = False


@dataclass(frozen=True)
class TurnRecord:
    turn: int
    messages_before: int  # how many model-history messages the session had when the turn began
    updates_before: int  # how many updates its replay log had
    compactions_before: int  # how many times its history had been compacted (positions before one are gone)
    undone: bool
    notes: str | None = None  # JSON: the notes its prompt brought the model


class SqliteCheckpoints:
    """The checkpoint tables of a session store (sharing its SQLite connection)."""

    def __init__(self, db: sqlite3.Connection, path: str) -> None:
        self._db = db
        self._path = path
        try:
            db.executescript(SCHEMA)
            for table, columns in ADDED.items():
                have = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
                for name, kind in columns:
                    if name not in have:
                        db.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")
        except sqlite3.Error as exc:
            raise StoreError(f"session store {path}: {exc}") from exc

    @property
    def home(self) -> Path:
        """The data folder the store is in."""
        return Path(self._path).parent

    def _fail(self, exc: sqlite3.Error) -> StoreError:
        return StoreError(f"session store {self._path}: {exc}")

    def keep(self, data: bytes) -> str:
        """Store `data` once; its hash."""
        digest = content_hash(data)
        try:
            self._db.execute("INSERT OR IGNORE INTO contents (hash, data) VALUES (?, ?)", (digest, data))
        except sqlite3.Error as exc:
            raise self._fail(exc) from exc
        return digest

    def blob(self, digest: str) -> bytes | None:
        try:
            row = self._db.execute("SELECT data FROM contents WHERE hash = ?", (digest,)).fetchone()
        except sqlite3.Error as exc:
            raise self._fail(exc) from exc
        return bytes(row[0]) if row else None

    def begin_turn(self, session_id: str, messages_before: int, updates_before: int, compactions: int = 0) -> int:
        """Number the session's next turn, remembering where its history and replay log began."""
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                (last,) = self._db.execute(
                    "SELECT coalesce(max(turn), 0) FROM turns WHERE session_id = ?", (session_id,)
                ).fetchone()
                self._db.execute(
                    "INSERT INTO turns (session_id, turn, messages_before, updates_before, compactions_before) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (session_id, last + 1, messages_before, updates_before, compactions),
                )
        except sqlite3.Error as exc:
            raise self._fail(exc) from exc
        return int(last) + 1

    def record_before(self, session_id: str, turn: int, path: str, before: Version) -> bool:
        """The file's content before the turn first changed it; False if the turn has an entry for it already."""
        try:
            cursor = self._db.execute(
                "INSERT OR IGNORE INTO checkpoints "
                "(session_id, turn, path, before_state, before_hash, note, before_mode) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (session_id, turn, path, before.state, before.hash, before.note, before.mode),
            )
        except sqlite3.Error as exc:
            raise self._fail(exc) from exc
        return cursor.rowcount == 1

    def record_after(self, session_id: str, turn: int, path: str, after: Version) -> None:
        try:
            self._db.execute(
                "UPDATE checkpoints SET after_state = ?, after_hash = ?, after_mode = ?, note = coalesce(note, ?) "
                "WHERE session_id = ? AND turn = ? AND path = ?",
                (after.state, after.hash, after.mode, after.note, session_id, turn, path),
            )
        except sqlite3.Error as exc:
            raise self._fail(exc) from exc

    def mark_foreign(self, session_id: str, turn: int, path: str) -> None:
        """Someone else changed the file between two of the turn's own changes."""
        self._update("UPDATE checkpoints SET foreign_change = 1", session_id, [(turn, path)])

    def mark_entries_undone(self, session_id: str, entries: Sequence[tuple[int, str]]) -> None:
        self._update("UPDATE checkpoints SET undone = 1", session_id, entries)

    def _update(self, statement: str, session_id: str, entries: Sequence[tuple[int, str]]) -> None:
        try:
            self._db.executemany(
                f"{statement} WHERE session_id = ? AND turn = ? AND path = ?",
                [(session_id, turn, path) for turn, path in entries],
            )
        except sqlite3.Error as exc:
            raise self._fail(exc) from exc

    def entries(self, session_id: str, turn: int) -> list[FileEntry]:
        try:
            rows = self._db.execute(
                "SELECT path, before_state, before_hash, note, before_mode, after_state, after_hash, after_mode, "
                "foreign_change, undone FROM checkpoints WHERE session_id = ? AND turn = ? ORDER BY path",
                (session_id, turn),
            ).fetchall()
        except sqlite3.Error as exc:
            raise self._fail(exc) from exc
        return [
            FileEntry(
                row[0],
                Version(row[1], row[2], row[3], row[4]),
                Version(row[5], row[6], None, row[7]),
                bool(row[8]),
                bool(row[9]),
            )
            for row in rows
        ]

    def turns(self, session_id: str) -> list[TurnRecord]:
        try:
            rows = self._db.execute(
                "SELECT turn, messages_before, updates_before, compactions_before, undone, notes FROM turns "
                "WHERE session_id = ? ORDER BY turn",
                (session_id,),
            ).fetchall()
        except sqlite3.Error as exc:
            raise self._fail(exc) from exc
        return [
            TurnRecord(turn, messages, updates, compactions, bool(undone), notes)
            for turn, messages, updates, compactions, undone, notes in rows
        ]

    def set_notes(self, session_id: str, turn: int, notes: str) -> None:
        """The notes (JSON) the turn's prompt brought the model."""
        try:
            self._db.execute("UPDATE turns SET notes = ? WHERE session_id = ? AND turn = ?", (notes, session_id, turn))
        except sqlite3.Error as exc:
            raise self._fail(exc) from exc

    def mark_undone(self, session_id: str, turns: Sequence[int]) -> None:
        try:
            self._db.executemany(
                "UPDATE turns SET undone = 1 WHERE session_id = ? AND turn = ?", [(session_id, t) for t in turns]
            )
        except sqlite3.Error as exc:
            raise self._fail(exc) from exc

    def update_count(self, session_id: str) -> int:
        """How many updates the session's replay log holds (where a turn's begin)."""
        try:
            (count,) = self._db.execute(
                "SELECT coalesce(max(seq), 0) FROM updates WHERE session_id = ?", (session_id,)
            ).fetchone()
        except sqlite3.Error as exc:
            raise self._fail(exc) from exc
        return int(count)

    def drop_updates(self, session_id: str, keep: int, upto: int | None = None) -> None:
        """Drop the updates of the replay log after the first `keep`, up to number `upto` (None: all of them): a
        rewind drops the turns it goes back over, and keeps the prompt that asked for it."""
        try:
            self._db.execute(
                "DELETE FROM updates WHERE session_id = ? AND seq > ? AND (? IS NULL OR seq <= ?)",
                (session_id, keep, upto, upto),
            )
        except sqlite3.Error as exc:
            raise self._fail(exc) from exc

    def forget_turns_from(self, session_id: str, turn: int) -> None:
        """Drop the records of `turn` and every later one (the conversation was rewound to before it)."""
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                for table in ("checkpoints", "turns"):
                    self._db.execute(f"DELETE FROM {table} WHERE session_id = ? AND turn >= ?", (session_id, turn))
        except sqlite3.Error as exc:
            raise self._fail(exc) from exc

    def copy(self, source_id: str, target_id: str) -> None:
        """Give a fork the checkpoints of the turns it was forked from (the blobs are shared, not copied)."""
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                for table, columns in (
                    (
                        "checkpoints",
                        "turn, path, before_state, before_hash, after_state, after_hash, note, before_mode, "
                        "after_mode, foreign_change, undone",
                    ),
                    ("turns", "turn, messages_before, updates_before, compactions_before, undone, notes"),
                ):
                    self._db.execute(
                        f"INSERT INTO {table} (session_id, {columns}) SELECT ?, {columns} FROM {table} "
                        "WHERE session_id = ?",
                        (target_id, source_id),
                    )
        except sqlite3.Error as exc:
            raise self._fail(exc) from exc

    def delete(self, session_id: str) -> None:
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                for table in ("checkpoints", "turns"):
                    self._db.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
        except sqlite3.Error as exc:
            raise self._fail(exc) from exc
        self.prune()

    def prune(self) -> None:
        """Drop the contents no checkpoint refers to any more."""
        try:
            self._db.execute(
                "DELETE FROM contents WHERE hash NOT IN (SELECT before_hash FROM checkpoints "
                "WHERE before_hash IS NOT NULL UNION SELECT after_hash FROM checkpoints WHERE after_hash IS NOT NULL)"
            )
        except sqlite3.Error as exc:
            raise self._fail(exc) from exc
