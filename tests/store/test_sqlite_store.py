"""`SqliteSessionStore` on a real file: records, ordered logs, newest-first paging, delete, fork copies, bad files."""

from __future__ import annotations

import base64
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from coder_agent.store.base import SessionRecord, StoreError
from coder_agent.store.sqlite import SqliteSessionStore


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "home" / "sessions.db"


@pytest.fixture
def store(db: Path) -> Iterator[SqliteSessionStore]:
    opened = SqliteSessionStore(db)
    yield opened
    opened.close()


def record(session_id: str, cwd: str = "/work/a", updated_at: str = "2026-01-01T00:00:00.000Z") -> SessionRecord:
    return SessionRecord(id=session_id, cwd=cwd, created_at="2026-01-01T00:00:00.000Z", updated_at=updated_at)


def stamp(i: int) -> str:
    return f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}.000Z"


def all_pages(store: SqliteSessionStore, cwd: str | None, limit: int) -> list[list[str]]:
    pages, cursor = [], None
    while True:
        records, cursor = store.list(cwd, cursor, limit)
        pages.append([r.id for r in records])
        if cursor is None:
            return pages


def test_a_created_session_reads_back_with_every_field_and_survives_reopening(
    store: SqliteSessionStore, db: Path
) -> None:
    created = SessionRecord(
        id="sess_1",
        cwd="/work/a",
        additional_directories=["/work/lib"],
        title="Fix the parser",
        created_at="2026-01-01T00:00:00.000Z",
        updated_at="2026-01-01T00:01:00.000Z",
        mode="plan",
        model="openai/gpt-4o",
        thought_level="high",
        state={"rules": {"tools": {"write_file": True}}, "cost_usd": 0.25},
        parent_id="sess_0",
    )
    store.create(created)
    reopened = SqliteSessionStore(db)
    assert store.get("sess_1") == created
    assert reopened.get("sess_1") == created
    assert store.get("sess_unknown") is None
    reopened.close()


def test_save_replaces_the_record_and_leaves_the_logs_alone(store: SqliteSessionStore) -> None:
    store.create(record("sess_1"))
    store.append_update("sess_1", b'{"n":1}')
    store.append_messages("sess_1", ['{"role":"user"}'])
    changed = record("sess_1", updated_at=stamp(5))
    changed.title, changed.mode = "Renamed", "ask"
    store.save(changed)
    assert store.get("sess_1") == changed
    assert list(store.updates("sess_1")) == [b'{"n":1}']
    assert store.messages("sess_1") == ['{"role":"user"}']


def test_creating_an_id_twice_is_a_store_error(store: SqliteSessionStore) -> None:
    store.create(record("sess_1"))
    with pytest.raises(StoreError, match=r"sessions\.db"):
        store.create(record("sess_1"))


def test_updates_and_messages_read_back_in_append_order_per_session(store: SqliteSessionStore) -> None:
    for session_id in ("sess_a", "sess_b"):
        store.create(record(session_id))
    for i in range(50):
        store.append_update("sess_a", b'{"a":%d}' % i)
        store.append_update("sess_b", b'{"b":%d}' % i)
        store.append_messages("sess_a", [f'{{"a":{i}}}', f'{{"a2":{i}}}'])
    store.append_messages("sess_b", [])  # nothing to add is fine
    assert list(store.updates("sess_a")) == [b'{"a":%d}' % i for i in range(50)]
    assert list(store.updates("sess_b")) == [b'{"b":%d}' % i for i in range(50)]
    assert store.messages("sess_a") == [m for i in range(50) for m in (f'{{"a":{i}}}', f'{{"a2":{i}}}')]
    assert store.messages("sess_b") == []
    assert list(store.updates("sess_unknown")) == []


def test_list_is_newest_first_and_filters_by_cwd(store: SqliteSessionStore) -> None:
    for i in range(6):
        store.create(record(f"sess_{i}", cwd="/work/a" if i % 2 else "/work/b", updated_at=stamp(i)))
    assert [r.id for r in store.list(None, None, 10)[0]] == [f"sess_{i}" for i in (5, 4, 3, 2, 1, 0)]
    assert [r.id for r in store.list("/work/a", None, 10)[0]] == ["sess_5", "sess_3", "sess_1"]
    assert store.list("/elsewhere", None, 10) == ([], None)
    assert store.list(None, None, 6)[1] is None  # exactly one page: no cursor


def test_paging_with_the_cursor_visits_every_session_once_even_with_equal_times(store: SqliteSessionStore) -> None:
    # 3 sessions share each timestamp: the id breaks ties, so a page boundary inside a tie loses nothing.
    for i in range(95):
        store.create(record(f"sess_{i:03d}", cwd="/work/a" if i % 3 else "/work/b", updated_at=stamp(i // 3)))
    expected = sorted((f"sess_{i:03d}" for i in range(95)), key=lambda sid: (stamp(int(sid[5:]) // 3), sid))[::-1]
    for limit in (1, 7, 10, 94, 95, 200):
        pages = all_pages(store, None, limit)
        assert [len(page) for page in pages[:-1]] == [limit] * (len(pages) - 1)
        assert [sid for page in pages for sid in page] == expected
    in_a = [sid for page in all_pages(store, "/work/a", 8) for sid in page]
    assert in_a == [sid for sid in expected if int(sid[5:]) % 3]


@pytest.mark.parametrize(
    "cursor",
    ["not a cursor", "!!!", base64.urlsafe_b64encode(b"[1]").decode(), base64.urlsafe_b64encode(b"42").decode()],
)
def test_an_invalid_cursor_is_a_value_error(store: SqliteSessionStore, cursor: str) -> None:
    store.create(record("sess_1"))
    with pytest.raises(ValueError, match="invalid cursor"):
        store.list(None, cursor, 10)


def test_delete_removes_the_session_and_its_logs_and_ignores_unknown_ids(store: SqliteSessionStore) -> None:
    for session_id in ("sess_gone", "sess_kept"):
        store.create(record(session_id))
        store.append_update(session_id, b"{}")
        store.append_messages(session_id, ["{}"])
    store.delete("sess_gone")
    store.delete("sess_never_existed")
    assert store.get("sess_gone") is None
    assert list(store.updates("sess_gone")) == [] and store.messages("sess_gone") == []
    assert [r.id for r in store.list(None, None, 10)[0]] == ["sess_kept"]
    assert list(store.updates("sess_kept")) == [b"{}"] and store.messages("sess_kept") == ["{}"]


def test_copy_logs_gives_the_fork_the_same_history_and_later_appends_stay_apart(store: SqliteSessionStore) -> None:
    store.create(record("sess_src"))
    store.create(record("sess_fork"))
    for i in range(3):
        store.append_update("sess_src", b'{"i":%d}' % i)
    store.append_messages("sess_src", ["m0", "m1"])
    store.copy_logs("sess_src", "sess_fork")
    store.append_update("sess_fork", b'{"fork":1}')
    store.append_messages("sess_fork", ["f"])
    store.append_update("sess_src", b'{"src":1}')
    assert list(store.updates("sess_fork")) == [b'{"i":0}', b'{"i":1}', b'{"i":2}', b'{"fork":1}']
    assert list(store.updates("sess_src")) == [b'{"i":0}', b'{"i":1}', b'{"i":2}', b'{"src":1}']
    assert store.messages("sess_fork") == ["m0", "m1", "f"]
    assert store.messages("sess_src") == ["m0", "m1"]


def test_a_file_of_garbage_is_a_store_error_naming_the_file(db: Path) -> None:
    db.parent.mkdir(parents=True)
    db.write_bytes(b"this is not a database\x00\xff" * 500)
    with pytest.raises(StoreError) as error:
        SqliteSessionStore(db)
    assert str(db) in str(error.value)
    assert "not a database" in str(error.value)


def test_a_path_that_cannot_be_opened_as_a_file_is_a_store_error(db: Path) -> None:
    db.mkdir(parents=True)  # we run as root, so chmod 000 would not stop us: a directory does
    with pytest.raises(StoreError, match=re.escape(str(db))):
        SqliteSessionStore(db)


def test_reading_a_damaged_log_is_a_store_error_naming_the_file(store: SqliteSessionStore, db: Path) -> None:
    store.create(record("sess_1"))
    for i in range(200):
        store.append_update("sess_1", b'{"i":%d,"pad":"%s"}' % (i, b"x" * 200))
    (root,) = store._db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'updates'").fetchone()
    store._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    with db.open("r+b") as file:  # overwrite the log table's root page; the sessions table stays intact
        file.seek((root - 1) * 4096)
        file.write(b"\xa5" * 4096)
    damaged = SqliteSessionStore(db)
    try:
        with pytest.raises(StoreError, match=re.escape(str(db))):
            list(damaged.updates("sess_1"))
    finally:
        damaged.close()


def test_sqlite_is_new_enough_for_row_value_cursors() -> None:
    assert sqlite3.sqlite_version_info >= (3, 15, 0)
