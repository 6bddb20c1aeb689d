"""`SessionStore` on SQLite: one file in `CODER_AGENT_HOME`, WAL mode, shared safely by several agents.

Each append is its own short transaction, committed before the update goes to the editor, so a crash
(even `kill -9`) loses nothing the editor was shown. With WAL and `synchronous=NORMAL` a commit does not
wait for the disk, only for the OS: a power cut may lose the last moments, a process crash loses nothing.

Every text written (updates, the model-facing history, a session's title and state) has the secrets the agent
knows masked first (`masking`): the file outlives the key, and `sessions show`/`export` print it. Images (blobs)
are kept as they are: base64 data holds no text to mask, and masking it could only break it.
"""

from __future__ import annotations

import base64
import json
import logging
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..kit.masking import mask, mask_bytes
from ..kit.private import private_file, private_folder, tighten
from .base import SessionRecord, StoreError
from .checkpoints import SqliteCheckpoints

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    cwd TEXT NOT NULL,
    additional_directories TEXT NOT NULL DEFAULT '[]',
    title TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    mode TEXT NOT NULL,
    model TEXT,
    thought_level TEXT,
    state TEXT NOT NULL DEFAULT '{}',
    parent_id TEXT
);
CREATE INDEX IF NOT EXISTS sessions_by_time ON sessions (updated_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS sessions_by_cwd ON sessions (cwd, updated_at DESC, id DESC);
CREATE TABLE IF NOT EXISTS updates (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS messages (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS blobs (
    session_id TEXT NOT NULL,
    key TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (session_id, key)
);
"""

_LOG_TABLES = ("updates", "messages")

_APPEND = (
    "INSERT INTO {table} (session_id, seq, body) "
    "VALUES (?, (SELECT coalesce(max(seq), 0) + 1 FROM {table} WHERE session_id = ?), ?)"
)

_COLUMNS = (
    "id, cwd, additional_directories, title, created_at, updated_at, mode, model, thought_level, state, parent_id"
)


def _record(row: Sequence[Any]) -> SessionRecord:
    return SessionRecord(
        id=row[0],
        cwd=row[1],
        additional_directories=json.loads(row[2]),
        title=row[3],
        created_at=row[4],
        updated_at=row[5],
        mode=row[6],
        model=row[7],
        thought_level=row[8],
        state=json.loads(row[9]),
        parent_id=row[10],
    )


def _row(record: SessionRecord) -> tuple[Any, ...]:
    return (
        record.id,
        record.cwd,
        json.dumps(record.additional_directories),
        None if record.title is None else mask(record.title),
        record.created_at,
        record.updated_at,
        record.mode,
        record.model,
        record.thought_level,
        mask(json.dumps(record.state)),
        record.parent_id,
    )


def _encode_cursor(updated_at: str, session_id: str) -> str:
    return base64.urlsafe_b64encode(json.dumps([updated_at, session_id]).encode()).decode()


def _decode_cursor(cursor: str) -> tuple[str, str]:
    try:
        updated_at, session_id = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        return str(updated_at), str(session_id)
    except (ValueError, TypeError) as exc:
        raise ValueError("invalid cursor") from exc


def _prepare_private(path: Path) -> None:
    """The database's folder 700 and its file 600 before SQLite opens it: SQLite gives its `-wal` and `-shm`
    files the database file's mode. Files an older version left readable by all are tightened."""
    private_folder(path.parent)
    private_file(path)
    for suffix in ("-wal", "-shm", "-journal"):
        tighten(path.with_name(path.name + suffix))


class SqliteSessionStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            _prepare_private(path)
            self._db = sqlite3.connect(path, timeout=10, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA busy_timeout=10000")
            self._db.executescript(SCHEMA)
            self._db.execute("SELECT count(*) FROM sessions").fetchone()
            self.checkpoints = SqliteCheckpoints(self._db, str(path))
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(
                f"cannot use the session store {path}: {exc}. Move the file aside (sessions in it cannot be loaded) "
                "or point CODER_AGENT_HOME elsewhere."
            ) from exc

    def close(self) -> None:
        self._db.close()

    def _read(self, sql: str, params: Sequence[Any]) -> list[Any]:
        try:
            return self._db.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(
                f"session store {self.path}: {exc}. Move the file aside or point CODER_AGENT_HOME elsewhere."
            ) from exc

    def _write(self, sql: str, params: Sequence[Any]) -> None:
        try:
            self._db.execute(sql, params)
        except sqlite3.Error as exc:
            raise StoreError(f"session store {self.path}: {exc}") from exc

    def create(self, record: SessionRecord) -> None:
        self._write(f"INSERT INTO sessions ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)", _row(record))

    def save(self, record: SessionRecord) -> None:
        self._write(f"INSERT OR REPLACE INTO sessions ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)", _row(record))

    def get(self, session_id: str) -> SessionRecord | None:
        rows = self._read(f"SELECT {_COLUMNS} FROM sessions WHERE id = ?", (session_id,))
        return _record(rows[0]) if rows else None

    def append_update(self, session_id: str, update_json: bytes) -> None:
        # The sequence number is computed under SQLite's write lock: safe when several agents append.
        self._write(_APPEND.format(table="updates"), (session_id, session_id, mask_bytes(update_json)))

    def append_messages(self, session_id: str, messages_json: Sequence[str]) -> None:
        if not messages_json:
            return
        rows = [(session_id, session_id, mask(body)) for body in messages_json]
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.executemany(_APPEND.format(table="messages"), rows)
        except sqlite3.Error as exc:
            raise StoreError(f"session store {self.path}: {exc}") from exc

    def truncate_messages(self, session_id: str, keep: int) -> None:
        # Sequence numbers start at 1 and have no gaps, so the first `keep` messages are seq <= keep.
        self._write("DELETE FROM messages WHERE session_id = ? AND seq > ?", (session_id, keep))

    def replace_messages(self, session_id: str, messages_json: Sequence[str]) -> None:
        # One transaction: a crash (kill -9 included) leaves the old conversation or the new one, never a mix.
        rows = [(session_id, seq, mask(body)) for seq, body in enumerate(messages_json, start=1)]
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
                self._db.executemany("INSERT INTO messages (session_id, seq, body) VALUES (?, ?, ?)", rows)
        except sqlite3.Error as exc:
            raise StoreError(f"session store {self.path}: {exc}") from exc

    def put_blob(self, session_id: str, key: str, data: str) -> None:
        self._write("INSERT OR IGNORE INTO blobs (session_id, key, data) VALUES (?, ?, ?)", (session_id, key, data))

    def blob(self, session_id: str, key: str) -> str | None:
        rows = self._read("SELECT data FROM blobs WHERE session_id = ? AND key = ?", (session_id, key))
        return str(rows[0][0]) if rows else None

    def updates(self, session_id: str) -> Iterator[bytes]:
        try:
            cursor = self._db.execute("SELECT body FROM updates WHERE session_id = ? ORDER BY seq", (session_id,))
            for (body,) in cursor:
                yield bytes(body)
        except sqlite3.Error as exc:
            raise StoreError(f"session store {self.path}: {exc}. Move the file aside.") from exc

    def messages(self, session_id: str) -> list[str]:
        rows = self._read("SELECT body FROM messages WHERE session_id = ? ORDER BY seq", (session_id,))
        return [body for (body,) in rows]

    def list(self, cwd: str | None, cursor: str | None, limit: int) -> tuple[list[SessionRecord], str | None]:
        where, params = [], []
        if cwd is not None:
            where.append("cwd = ?")
            params.append(cwd)
        if cursor:
            updated_at, session_id = _decode_cursor(cursor)
            where.append("(updated_at, id) < (?, ?)")
            params += [updated_at, session_id]
        sql = f"SELECT {_COLUMNS} FROM sessions"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY updated_at DESC, id DESC LIMIT ?"
        rows = self._read(sql, [*params, limit + 1])
        records = [_record(row) for row in rows[:limit]]
        next_cursor = _encode_cursor(records[-1].updated_at, records[-1].id) if len(rows) > limit else None
        return records, next_cursor

    def delete(self, session_id: str) -> None:
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                for table, column in (*((log, "session_id") for log in (*_LOG_TABLES, "blobs")), ("sessions", "id")):
                    self._db.execute(f"DELETE FROM {table} WHERE {column} = ?", (session_id,))
        except sqlite3.Error as exc:
            raise StoreError(f"session store {self.path}: {exc}") from exc
        self.checkpoints.delete(session_id)

    def roots(self) -> set[str]:
        """Every folder a saved session names (its cwd and additional directories): their snapshots stay."""
        try:
            rows = self._db.execute("SELECT cwd, additional_directories FROM sessions").fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"session store {self.path}: {exc}") from exc
        found: set[str] = set()
        for cwd, directories in rows:
            found.add(cwd)
            try:
                found.update(str(directory) for directory in json.loads(directories))
            except ValueError:
                continue
        return found

    def copy_logs(self, source_id: str, target_id: str) -> None:
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                for table in _LOG_TABLES:
                    self._db.execute(
                        f"INSERT INTO {table} (session_id, seq, body) SELECT ?, seq, body FROM {table} "
                        "WHERE session_id = ?",
                        (target_id, source_id),
                    )
                self._db.execute(
                    "INSERT OR IGNORE INTO blobs (session_id, key, data) SELECT ?, key, data FROM blobs "
                    "WHERE session_id = ?",
                    (target_id, source_id),
                )
        except sqlite3.Error as exc:
            raise StoreError(f"session store {self.path}: {exc}") from exc
