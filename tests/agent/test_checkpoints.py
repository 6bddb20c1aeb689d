"""Checkpoints: a turn's files kept before it changes them, the per-turn summary, undo, and what undo leaves alone:
files changed since (between turns, or during one), files outside the folders, links swapped in."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import anyio
import pytest

from coder_agent.agent.workspace.checkpoints import Checkpoints
from coder_agent.agent.workspace.file_content import UNKNOWN, Content, of_bytes, take
from coder_agent.agent.workspace.file_notes import changed_files_note
from coder_agent.agent.workspace.restore import Restore
from coder_agent.agent.workspace.undo import undo
from coder_agent.store.base import SessionRecord
from coder_agent.store.sqlite import SqliteSessionStore

pytestmark = pytest.mark.anyio


async def read(path: str) -> Content:
    return await anyio.to_thread.run_sync(lambda: take(path, follow=False))


async def write(path: Path, data: bytes | None) -> None:
    if data is None:
        await anyio.Path(path).unlink()
    else:
        await anyio.Path(path).write_bytes(data)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def store(tmp_path: Path) -> SqliteSessionStore:
    store = SqliteSessionStore(tmp_path / "home" / "sessions.db")
    store.create(SessionRecord(id="s1", cwd=str(tmp_path)))
    return store


async def one_turn(checkpoints: Checkpoints, files: dict[Path, bytes | None]) -> None:
    """A turn that sets each file to its new content (None: deletes it), keeping the old first, and what it left."""
    checkpoints.begin_turn(messages_before=0)
    for path, new in files.items():
        checkpoints.before_change(str(path), await read(str(path)))
        await write(path, new)
        checkpoints.after_change(str(path), await read(str(path)))
    await checkpoints.end_turn(read)


async def test_undo_puts_back_edited_created_and_deleted_files_and_the_summary_counts_lines(
    store: SqliteSessionStore, root: Path
) -> None:
    edited, created, deleted = root / "a.py", root / "new.py", root / "old.py"
    edited.write_bytes(b"one\ntwo\n")
    deleted.write_bytes(b"bye\n")
    checkpoints = Checkpoints(store.checkpoints, "s1")
    checkpoints.begin_turn(messages_before=0)
    for path, new in {edited: b"one\nTWO\nthree\n", created: b"x\n", deleted: None}.items():
        checkpoints.before_change(str(path), await read(str(path)))
        await write(path, new)
        checkpoints.after_change(str(path), await read(str(path)))
    summary = await checkpoints.end_turn(read)
    assert [(c.path, c.kind, c.added, c.removed) for c in summary] == [
        (str(edited), "modified", 2, 1),
        (str(created), "created", 1, 0),
        (str(deleted), "deleted", 0, 1),
    ]
    assert changed_files_note(summary, lambda p: Path(p).name).splitlines()[3:] == [
        "- `a.py` +2 -1",
        "- `new.py` +1 -0 (created)",
        "- `old.py` +0 -1 (deleted)",
    ]
    report = await undo(Checkpoints(store.checkpoints, "s1"), Restore([str(root)]))  # a new process: the store
    assert (report.restored, report.deleted) == ([str(edited), str(deleted)], [str(created)])
    assert edited.read_bytes() == b"one\ntwo\n" and deleted.read_bytes() == b"bye\n" and not created.exists()
    again = await undo(checkpoints, Restore([str(root)]))
    assert again.nothing and again.turns == []


async def test_a_file_changed_after_the_turn_is_left_alone_unless_forced(store: SqliteSessionStore, root: Path) -> None:
    path = root / "a.py"
    path.write_bytes(b"v1\n")
    checkpoints = Checkpoints(store.checkpoints, "s1")
    await one_turn(checkpoints, {path: b"v2\n"})
    path.write_bytes(b"the user's v3\n")
    report = await undo(checkpoints, Restore([str(root)]))
    assert report.changed_since == [str(path)] and path.read_bytes() == b"the user's v3\n"
    assert "changed since" in report.for_model()
    forced = await undo(checkpoints, Restore([str(root)]), force=True)
    assert forced.restored == [str(path)] and path.read_bytes() == b"v1\n"


async def test_a_file_someone_changed_during_the_turn_is_left_alone_unless_forced(
    store: SqliteSessionStore, root: Path
) -> None:
    path = root / "a.py"
    path.write_bytes(b"v1\n")
    checkpoints = Checkpoints(store.checkpoints, "s1")
    checkpoints.begin_turn(0)
    checkpoints.before_change(str(path), await read(str(path)))
    path.write_bytes(b"v2\n")
    checkpoints.after_change(str(path), await read(str(path)))
    checkpoints.mark_foreign(str(path))  # the user saved v2b; the turn then wrote v3 over it
    path.write_bytes(b"v3 on the user's v2b\n")
    checkpoints.after_change(str(path), await read(str(path)))
    await checkpoints.end_turn(read)
    report = await undo(checkpoints, Restore([str(root)]))
    assert report.changed_since == [str(path)] and path.read_bytes() == b"v3 on the user's v2b\n"


async def test_too_large_and_unknown_contents_are_said_not_kept(store: SqliteSessionStore, root: Path) -> None:
    big, unknown = root / "big.bin", root / "gen.txt"
    big.write_bytes(b"x" * 2048)
    unknown.write_bytes(b"?\n")
    checkpoints = Checkpoints(store.checkpoints, "s1", max_bytes=1024)
    checkpoints.begin_turn(0)
    checkpoints.before_change(str(big), of_bytes(big.read_bytes()))
    checkpoints.before_change(str(unknown), UNKNOWN)
    big.write_bytes(b"small\n")
    unknown.write_bytes(b"regenerated\n")
    await checkpoints.end_turn(read)
    report = await undo(checkpoints, Restore([str(root)]))
    assert report.not_kept == [str(big), str(unknown)]
    assert "not kept" in report.for_model()


async def test_undoing_two_turns_restores_the_oldest_content(store: SqliteSessionStore, root: Path) -> None:
    path = root / "a.py"
    path.write_bytes(b"v1\n")
    checkpoints = Checkpoints(store.checkpoints, "s1")
    for content in (b"v2\n", b"v3\n"):
        await one_turn(checkpoints, {path: content})
    report = await undo(checkpoints, Restore([str(root)]), turns=2)
    assert report.turns == [1, 2] and path.read_bytes() == b"v1\n"


async def test_undoing_two_turns_stops_at_an_edit_the_user_made_between_them(
    store: SqliteSessionStore, root: Path
) -> None:
    path, other = root / "a.py", root / "b.py"
    path.write_bytes(b"v1\n")
    other.write_bytes(b"o1\n")
    checkpoints = Checkpoints(store.checkpoints, "s1")
    await one_turn(checkpoints, {path: b"v2\n", other: b"o2\n"})
    path.write_bytes(b"the user's v2b\n")  # between the turns
    await one_turn(checkpoints, {path: b"v3\n"})
    report = await undo(checkpoints, Restore([str(root)]), turns=2)
    assert path.read_bytes() == b"the user's v2b\n"  # turn 2 undone; turn 1's change to it is the user's now
    assert other.read_bytes() == b"o1\n"
    assert report.restored == [str(path), str(other)] and report.changed_since == [str(path)]


async def test_modes_come_back_as_they_were(store: SqliteSessionStore, root: Path) -> None:
    secret, script, plain = root / "secret", root / "run.sh", root / "plain.txt"
    secret.write_bytes(b"token\n")
    script.write_bytes(b"#!/bin/sh\n")
    plain.write_bytes(b"p\n")
    os.chmod(secret, 0o600)
    os.chmod(script, 0o755)
    checkpoints = Checkpoints(store.checkpoints, "s1")
    checkpoints.begin_turn(0)
    for path in (secret, script, plain):
        checkpoints.before_change(str(path), await read(str(path)))
    secret.unlink()
    script.write_bytes(b"#!/bin/sh\necho\n")
    os.chmod(script, 0o644)
    os.chmod(plain, 0o600)
    for path in (secret, script, plain):
        checkpoints.after_change(str(path), await read(str(path)))
    summary = await checkpoints.end_turn(read)
    assert changed_files_note(summary, lambda p: Path(p).name).splitlines()[3:] == [
        "- `secret` +0 -1 (deleted)",
        "- `run.sh` +1 -0, mode 755 -> 644",
        "- `plain.txt` mode 644 -> 600",
    ]
    report = await undo(checkpoints, Restore([str(root)]))
    assert sorted(report.restored) == sorted(map(str, (secret, script, plain)))
    modes = {path.name: stat.S_IMODE(path.stat().st_mode) for path in (secret, script, plain)}
    assert modes == {"secret": 0o600, "run.sh": 0o755, "plain.txt": 0o644}
    assert secret.read_bytes() == b"token\n" and script.read_bytes() == b"#!/bin/sh\n"


async def test_a_file_swapped_for_a_link_or_outside_the_folders_now_is_never_written(
    store: SqliteSessionStore, root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "precious"
    target.write_bytes(b"precious\n")
    swapped, moved = root / "a.py", root / "sub" / "b.py"
    moved.parent.mkdir()
    swapped.write_bytes(b"v1\n")
    moved.write_bytes(b"w1\n")
    checkpoints = Checkpoints(store.checkpoints, "s1")
    await one_turn(checkpoints, {swapped: b"v2\n", moved: b"w2\n"})
    swapped.unlink()
    swapped.symlink_to(target)  # the file is a link now
    os.rename(root / "sub", outside / "sub")
    (root / "sub").symlink_to(outside / "sub")  # and a folder on the way is one too
    report = await undo(checkpoints, Restore([str(root)]), force=True)
    assert [path for path, _ in report.refused] == [str(swapped), str(moved)]
    assert target.read_bytes() == b"precious\n" and (outside / "sub" / "b.py").read_bytes() == b"w2\n"
    elsewhere = await undo(checkpoints, Restore([str(tmp_path / "another")]), force=True)
    assert all("outside the session's folders" in why for _, why in elsewhere.refused)


async def test_contents_are_kept_once_and_go_with_the_session(store: SqliteSessionStore, root: Path) -> None:
    path = root / "a.py"
    checkpoints = Checkpoints(store.checkpoints, "s1")
    for _ in range(3):
        path.write_bytes(b"same\n")
        await one_turn(checkpoints, {path: b"other\n"})
    blobs = store._db.execute("SELECT count(*) FROM contents").fetchone()[0]
    assert blobs == 2
    store.delete("s1")
    assert store._db.execute("SELECT count(*) FROM contents").fetchone()[0] == 0
