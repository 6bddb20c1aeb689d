"""Two agent processes share one `sessions.db`: appends from both at once are all kept, once each, in order."""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
import sys
import time
from collections import Counter
from pathlib import Path

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from coder_agent.store.base import SessionRecord
from coder_agent.store.sqlite import SqliteSessionStore
from tests.support.driving import REPO_ROOT

pytestmark = pytest.mark.anyio

APPENDS = 500
MESSAGE_EVERY = 10  # a batch of two messages every tenth append

# One writer: its own session plus the shared one; it starts appending when told to, so both overlap.
WRITER = """
import sys
import time
from pathlib import Path
from coder_agent.store.base import SessionRecord
from coder_agent.store.sqlite import SqliteSessionStore

path, name, count, every = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
store = SqliteSessionStore(path)
store.create(SessionRecord(id=f"sess_{name}", cwd="/w", created_at="t", updated_at="t"))
print("ready", flush=True)
start_at = float(sys.stdin.readline())
while time.time() < start_at:  # both writers start at the same instant, whichever heard "go" first
    pass
for i in range(count):
    store.append_update("sess_shared", b'{"w":"%s","i":%d}' % (name.encode(), i))
    store.append_update(f"sess_{name}", b'{"i":%d}' % i)
    if i % every == 0:
        store.append_messages("sess_shared", ['{"w":"%s","i":%d,"part":%d}' % (name, i, p) for p in (0, 1)])
    # Agents append as chunks stream in, with gaps; back-to-back commits would starve the other writer in
    # SQLite's busy handler (it backs off for milliseconds) and the two would not overlap at all.
    time.sleep(0.0003)
print("done", flush=True)
"""


def rows(db: Path, table: str, session_id: str) -> list[tuple[int, dict[str, object]]]:
    with sqlite3.connect(db) as conn:
        query = f"SELECT seq, body FROM {table} WHERE session_id = ? ORDER BY seq"
        return [(seq, json.loads(body)) for seq, body in conn.execute(query, (session_id,))]


async def read_line(stream: BufferedByteReceiveStream) -> bytes:
    with anyio.fail_after(30):
        return await stream.receive_until(b"\n", 1024)


async def start_writer(db: Path, name: str) -> tuple[Process, BufferedByteReceiveStream]:
    command = [sys.executable, "-c", WRITER, str(db), name, str(APPENDS), str(MESSAGE_EVERY)]
    process = await anyio.open_process(command, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    assert process.stdout is not None
    return process, BufferedByteReceiveStream(process.stdout)


@pytest.mark.e2e
async def test_two_processes_appending_at_once_keep_every_row_exactly_once_with_contiguous_numbers(
    tmp_path: Path,
) -> None:
    db = tmp_path / "sessions.db"
    store = SqliteSessionStore(db)
    store.create(SessionRecord(id="sess_shared", cwd="/w", created_at="t", updated_at="t"))
    store.close()
    writers = [await start_writer(db, name) for name in ("one", "two")]
    try:
        for _, out in writers:
            assert await read_line(out) == b"ready"
        start_at = time.time() + 0.3
        for process, _ in writers:  # both go at the same moment
            assert process.stdin is not None
            await process.stdin.send(b"%f\n" % start_at)
        for process, out in writers:
            assert await read_line(out) == b"done"
            with anyio.fail_after(30):
                assert await process.wait() == 0
    finally:
        for process, _ in writers:
            if process.returncode is None:
                process.kill()
            with anyio.CancelScope(shield=True):
                await process.aclose()

    shared = rows(db, "updates", "sess_shared")
    assert [seq for seq, _ in shared] == list(range(1, 2 * APPENDS + 1))
    seen = Counter((body["w"], body["i"]) for _, body in shared)
    assert seen == Counter({(w, i): 1 for w in ("one", "two") for i in range(APPENDS)})
    for name in ("one", "two"):  # each writer's own order is kept inside the shared log
        assert [body["i"] for _, body in shared if body["w"] == name] == list(range(APPENDS))
        own = rows(db, "updates", f"sess_{name}")
        assert own == [(i + 1, {"i": i}) for i in range(APPENDS)]
    switches = sum(1 for (_, a), (_, b) in itertools.pairwise(shared) if a["w"] != b["w"])
    assert switches >= 2, "the writers ran one after the other: the test proved nothing"

    messages = rows(db, "messages", "sess_shared")
    batches = 2 * (APPENDS // MESSAGE_EVERY)
    assert [seq for seq, _ in messages] == list(range(1, 2 * batches + 1))
    pairs = [(a, b) for (_, a), (_, b) in zip(messages[::2], messages[1::2], strict=True)]
    assert all(a["part"] == 0 and b == {**a, "part": 1} for a, b in pairs), "a batch was split by the other writer"
    assert len({(a["w"], a["i"]) for a, _ in pairs}) == batches
