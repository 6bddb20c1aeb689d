"""Compaction replaces a session's conversation at once; images are kept once, as blobs, and follow a fork."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from coder_agent.store.base import SessionRecord
from coder_agent.store.sqlite import SqliteSessionStore
from tests.support.agent_env import REPO_ROOT


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteSessionStore]:
    opened = SqliteSessionStore(tmp_path / "sessions.db")
    opened.create(SessionRecord(id="sess_a", cwd="/w", created_at="t", updated_at="t"))
    yield opened
    opened.close()


def test_replacing_the_messages_renumbers_them_and_later_appends_follow(store: SqliteSessionStore) -> None:
    store.append_messages("sess_a", [f'{{"n":{i}}}' for i in range(5)])
    store.replace_messages("sess_a", ['{"summary":1}', '{"n":4}'])
    store.append_messages("sess_a", ['{"n":5}'])
    assert store.messages("sess_a") == ['{"summary":1}', '{"n":4}', '{"n":5}']
    store.truncate_messages("sess_a", 2)  # sequence numbers have no gaps after a replace
    assert store.messages("sess_a") == ['{"summary":1}', '{"n":4}']


def test_a_blob_is_kept_once_copied_by_a_fork_and_deleted_with_its_session(store: SqliteSessionStore) -> None:
    store.put_blob("sess_a", "k1", "aGVsbG8=")
    store.put_blob("sess_a", "k1", "aGVsbG8=")  # the same image again: still one row
    store.create(SessionRecord(id="sess_fork", cwd="/w", created_at="t", updated_at="t"))
    store.copy_logs("sess_a", "sess_fork")
    assert store.blob("sess_fork", "k1") == "aGVsbG8="
    store.delete("sess_a")
    assert store.blob("sess_a", "k1") is None
    assert store.blob("sess_fork", "k1") == "aGVsbG8="
    with sqlite3.connect(store.path) as conn:
        assert conn.execute("SELECT count(*) FROM blobs").fetchone() == (1,)


# Replaces the conversation over and over, alternating between two histories of different lengths, and says
# how many replacements it has made; the test kills it with SIGKILL somewhere in the middle of one.
REPLACER = """
import sys
from pathlib import Path
from coder_agent.store.sqlite import SqliteSessionStore

store = SqliteSessionStore(Path(sys.argv[1]))
old = ['{"h":"old","i":%d}' % i for i in range(40)]
new = ['{"h":"new","i":%d}' % i for i in range(7)]
n = 0
while True:
    store.replace_messages("sess_a", new if n % 2 else old)
    n += 1
    print(n, flush=True)
"""


@pytest.mark.e2e
@pytest.mark.anyio
async def test_a_kill_9_in_the_middle_of_a_replace_leaves_the_old_or_the_new_conversation(
    store: SqliteSessionStore,
) -> None:
    seen: set[str] = set()
    for attempt in range(6):
        command = [sys.executable, "-c", REPLACER, str(store.path)]
        process = await anyio.open_process(command, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
        try:
            assert process.stdout is not None
            out = BufferedByteReceiveStream(process.stdout)
            with anyio.fail_after(30):
                for _ in range(20 + attempt * 7):  # kill it at a different point each time
                    await out.receive_until(b"\n", 64)
            os.kill(process.pid, signal.SIGKILL)
            with anyio.fail_after(30):
                await process.wait()
        finally:
            if process.returncode is None:
                process.kill()
            with anyio.CancelScope(shield=True):
                await process.aclose()
        bodies = [json.loads(body) for body in store.messages("sess_a")]
        kinds = {body["h"] for body in bodies}
        assert len(kinds) == 1, f"a mix of conversations after kill -9: {kinds}"
        assert [body["i"] for body in bodies] == list(range(40 if kinds == {"old"} else 7))
        seen |= kinds
    assert seen, "no conversation was ever written"
