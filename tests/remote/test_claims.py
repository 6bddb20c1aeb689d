"""A session is live on one connection at a time; a connection that is going away is waited for, bounded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from coder_agent.agent.errors import Busy
from coder_agent.agent.sessions.live import Sessions
from coder_agent.remote.claims import Claims
from coder_agent.store.sqlite import SqliteSessionStore

pytestmark = pytest.mark.anyio

NO_CLIENT: Any = None  # nothing here sends to a client


def two_connections(tmp_path: Path, release_wait: float = 5.0) -> tuple[Claims, Sessions, Sessions]:
    claims = Claims(release_wait)
    a = Sessions(NO_CLIENT, SqliteSessionStore(tmp_path / "sessions.db"), claims=claims.holder("a"))
    b = Sessions(NO_CLIENT, SqliteSessionStore(tmp_path / "sessions.db"), claims=claims.holder("b"))
    return claims, a, b


async def test_a_session_live_on_one_connection_cannot_be_restored_or_deleted_on_another(tmp_path: Path) -> None:
    _, a, b = two_connections(tmp_path)
    session = a.create(str(tmp_path), [], "default", None)
    with pytest.raises(Busy) as refused:
        b.restore(session.id, None, None)
    assert "open on another connection" in refused.value.message
    with pytest.raises(Busy):
        await b.delete(session.id)
    assert session.id not in b.live
    await a.close(session.id)
    assert b.restore(session.id, None, None).id == session.id
    with pytest.raises(Busy):
        a.restore(session.id, None, None)
    b.release_all()  # the connection ended
    assert a.restore(session.id, None, None).id == session.id


async def test_a_failed_restore_holds_nothing(tmp_path: Path) -> None:
    claims, a, _ = two_connections(tmp_path)
    with pytest.raises(Exception, match="Unknown session"):
        a.restore("sess_missing", None, None)
    assert claims.held_by("sess_missing") is None


async def test_a_connection_that_is_going_away_is_waited_for_until_it_lets_go(tmp_path: Path) -> None:
    claims, a, b = two_connections(tmp_path)
    session = a.create(str(tmp_path), [], "default", None)
    holder = claims.held_by(session.id)
    assert holder is not None
    holder.closing = True
    released = anyio.Event()

    async def load() -> None:
        await b.wait_released(session.id)
        released.set()

    async with anyio.create_task_group() as group:
        group.start_soon(load)
        await anyio.wait_all_tasks_blocked()
        assert not released.is_set()
        a.release_all()
        with anyio.fail_after(5):
            await released.wait()
    assert b.restore(session.id, None, None).id == session.id


async def test_the_wait_is_bounded_and_a_connection_still_there_is_not_waited_for(tmp_path: Path) -> None:
    claims, a, b = two_connections(tmp_path, release_wait=0.2)
    session = a.create(str(tmp_path), [], "default", None)
    with anyio.fail_after(1):
        await b.wait_released(session.id)  # `a` is not closing: no wait at all
    holder = claims.held_by(session.id)
    assert holder is not None
    holder.closing = True
    with anyio.fail_after(5):
        await b.wait_released(session.id)  # gives up after 0.2 s
    with pytest.raises(Busy):
        b.restore(session.id, None, None)
