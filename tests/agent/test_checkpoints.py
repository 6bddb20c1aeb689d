"""Checkpoints: a turn's files kept before it changes them, the per-turn summary, undo, and what undo leaves alone."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from coder_agent.agent.workspace.checkpoints import Checkpoints, summary_text
from coder_agent.agent.workspace.file_content import UNKNOWN, Content, of_bytes, take
from coder_agent.store.base import SessionRecord
from coder_agent.store.sqlite import SqliteSessionStore

pytestmark = pytest.mark.anyio


async def read(path: str) -> Content:
    return await anyio.to_thread.run_sync(take, path)


async def write(path: str, data: bytes | None) -> None:
    if data is None:
        await anyio.Path(path).unlink()
    else:
        await anyio.Path(path).write_bytes(data)


@pytest.fixture
def store(tmp_path: Path) -> SqliteSessionStore:
    store = SqliteSessionStore(tmp_path / "sessions.db")
    store.create(SessionRecord(id="s1", cwd=str(tmp_path)))
    return store


async def one_turn(checkpoints: Checkpoints, files: dict[Path, bytes | None]) -> None:
    """A turn that sets each file to its new content (None: deletes it), keeping the old first."""
    checkpoints.begin_turn(messages_before=0)
    for path, new in files.items():
        checkpoints.before_change(str(path), await read(str(path)))
        await write(str(path), new)


async def test_undo_puts_back_edited_created_and_deleted_files_and_the_summary_counts_lines(
    store: SqliteSessionStore, tmp_path: Path
) -> None:
    edited, created, deleted = tmp_path / "a.py", tmp_path / "new.py", tmp_path / "old.py"
    edited.write_bytes(b"one\ntwo\n")
    deleted.write_bytes(b"bye\n")
    checkpoints = Checkpoints(store.checkpoints, "s1")
    await one_turn(checkpoints, {edited: b"one\nTWO\nthree\n", created: b"x\n", deleted: None})
    summary = await checkpoints.end_turn(read)
    assert [(c.path, c.kind, c.added, c.removed) for c in summary] == [
        (str(edited), "modified", 2, 1),
        (str(created), "created", 1, 0),
        (str(deleted), "deleted", 0, 1),
    ]
    assert summary_text(summary, lambda p: Path(p).name).splitlines()[1:] == [
        "a.py    +2 -1",
        "new.py  +1 -0  (created)",
        "old.py  +0 -1  (deleted)",
    ]
    report = await Checkpoints(store.checkpoints, "s1").undo(read, write)  # a new process: from the store alone
    assert (report.restored, report.deleted) == ([str(edited), str(deleted)], [str(created)])
    assert edited.read_bytes() == b"one\ntwo\n" and deleted.read_bytes() == b"bye\n" and not created.exists()
    again = await checkpoints.undo(read, write)
    assert again.nothing and again.turns == []


async def test_a_file_changed_after_the_turn_is_left_alone_unless_forced(
    store: SqliteSessionStore, tmp_path: Path
) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(b"v1\n")
    checkpoints = Checkpoints(store.checkpoints, "s1")
    await one_turn(checkpoints, {path: b"v2\n"})
    await checkpoints.end_turn(read)
    path.write_bytes(b"the user's v3\n")
    report = await checkpoints.undo(read, write)
    assert report.changed_since == [str(path)] and path.read_bytes() == b"the user's v3\n"
    assert "changed since" in report.for_model()
    forced = await checkpoints.undo(read, write, force=True)
    assert forced.restored == [str(path)] and path.read_bytes() == b"v1\n"


async def test_too_large_and_unknown_contents_are_said_not_kept(store: SqliteSessionStore, tmp_path: Path) -> None:
    big, unknown = tmp_path / "big.bin", tmp_path / "gen.txt"
    big.write_bytes(b"x" * 2048)
    unknown.write_bytes(b"?\n")
    checkpoints = Checkpoints(store.checkpoints, "s1", max_bytes=1024)
    checkpoints.begin_turn(0)
    checkpoints.before_change(str(big), of_bytes(big.read_bytes()))
    checkpoints.before_change(str(unknown), UNKNOWN)
    big.write_bytes(b"small\n")
    unknown.write_bytes(b"regenerated\n")
    await checkpoints.end_turn(read)
    report = await checkpoints.undo(read, write)
    assert report.not_kept == [str(big), str(unknown)]
    assert "not kept" in report.for_model()


async def test_undoing_two_turns_restores_the_oldest_content(store: SqliteSessionStore, tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(b"v1\n")
    checkpoints = Checkpoints(store.checkpoints, "s1")
    for content in (b"v2\n", b"v3\n"):
        await one_turn(checkpoints, {path: content})
        await checkpoints.end_turn(read)
    report = await checkpoints.undo(read, write, turns=2)
    assert report.turns == [1, 2] and path.read_bytes() == b"v1\n"


async def test_contents_are_kept_once_and_go_with_the_session(store: SqliteSessionStore, tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    checkpoints = Checkpoints(store.checkpoints, "s1")
    for _ in range(3):
        path.write_bytes(b"same\n")
        await one_turn(checkpoints, {path: b"other\n"})
        await checkpoints.end_turn(read)
    blobs = store._db.execute("SELECT count(*) FROM contents").fetchone()[0]
    assert blobs == 2
    store.delete("s1")
    assert store._db.execute("SELECT count(*) FROM contents").fetchone()[0] == 0
