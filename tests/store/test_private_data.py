"""The data folder is the user's alone: folders 700, files 600 (sessions, their WAL files, logs and rotations)."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from coder_agent.kit.logs import PrivateRotatingFileHandler, setup_logging
from coder_agent.store.base import SessionRecord
from coder_agent.store.sqlite import SqliteSessionStore


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    """The common umask (022), under which files are created world-readable unless made otherwise."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.fixture
def root_handlers() -> Iterator[None]:
    """Take back the handlers `setup_logging` adds to the root logger."""
    root = logging.getLogger()
    before, level = list(root.handlers), root.level
    yield
    for handler in root.handlers[:]:
        if handler not in before:
            root.removeHandler(handler)
            handler.close()
    root.setLevel(level)


def add_session(store: SqliteSessionStore) -> None:
    stamp = "2026-01-01T00:00:00.000Z"
    store.create(SessionRecord(id="s1", cwd="/w", created_at=stamp, updated_at=stamp))
    store.append_update("s1", b'{"sessionUpdate":"agent_message_chunk"}')


def test_a_new_data_folder_and_its_session_store_with_wal_files_are_private(tmp_path: Path) -> None:
    home = tmp_path / "share" / "coder-agent"
    store = SqliteSessionStore(home / "sessions.db")
    try:
        add_session(store)
        files = sorted(home.iterdir())
        assert [f.name for f in files] == ["sessions.db", "sessions.db-shm", "sessions.db-wal"]
        assert {f.name: mode(f) for f in files} == {f.name: 0o600 for f in files}
    finally:
        store.close()
    assert mode(home) == 0o700
    assert mode(tmp_path / "share") == 0o700  # a level we had to create


def test_a_new_log_folder_and_log_file_are_private(tmp_path: Path, root_handlers: None) -> None:
    home = tmp_path / "coder-agent"
    path = setup_logging("INFO", home / "logs")
    assert path is not None
    logging.getLogger("coder_agent.test").info("a prompt with code in it")
    assert path.read_text().endswith("a prompt with code in it\n")
    assert (mode(home), mode(home / "logs"), mode(path)) == (0o700, 0o700, 0o600)


def test_rotated_log_files_and_the_fresh_one_stay_private(tmp_path: Path) -> None:
    path = tmp_path / "coder-agent.log"
    handler = PrivateRotatingFileHandler(path, maxBytes=200, backupCount=2, delay=True)
    try:
        for n in range(20):
            handler.emit(logging.makeLogRecord({"msg": f"line {n} " + "x" * 40}))
    finally:
        handler.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["coder-agent.log", "coder-agent.log.1", "coder-agent.log.2"]
    assert {mode(p) for p in tmp_path.iterdir()} == {0o600}


def test_an_existing_too_open_data_folder_is_tightened_but_its_parent_is_not(
    tmp_path: Path, root_handlers: None
) -> None:
    parent = tmp_path / "share"
    home = parent / "coder-agent"
    (home / "logs").mkdir(parents=True)
    os.chmod(parent, 0o755)
    os.chmod(home, 0o755)
    os.chmod(home / "logs", 0o755)
    store = SqliteSessionStore(home / "sessions.db")
    add_session(store)
    store.close()  # a checkpoint removes the -wal file: leave an old, readable one as an older version could
    old_files = [home / "sessions.db", home / "sessions.db-wal", home / "logs" / "coder-agent.log"]
    old_files += [home / "logs" / "coder-agent.log.1"]
    for old in old_files:
        old.touch()
        os.chmod(old, 0o644)
    os.chmod(home, 0o755)

    SqliteSessionStore(home / "sessions.db").close()
    setup_logging("INFO", home / "logs")

    assert mode(parent) == 0o755
    assert (mode(home), mode(home / "logs")) == (0o700, 0o700)
    assert {old.name: mode(old) for old in old_files if old.exists()} == {
        old.name: 0o600 for old in old_files if old.exists()
    }
    assert (home / "sessions.db").exists() and (home / "logs" / "coder-agent.log.1").exists()


def test_the_process_umask_is_left_alone(tmp_path: Path, root_handlers: None) -> None:
    SqliteSessionStore(tmp_path / "home" / "sessions.db").close()
    setup_logging("INFO", tmp_path / "home" / "logs")
    current = os.umask(0o022)
    assert current == 0o022
