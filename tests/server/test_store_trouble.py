"""Sessions and a troubled store: a corrupt file leaves the agent working; a session deleted mid-turn stays gone."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from acp import RequestError

from coder_agent.config.settings import Settings
from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.driving import BackgroundPrompt, delete_session, open_session, prompt
from tests.support.inproc import inproc_agent

pytestmark = pytest.mark.anyio


async def test_a_corrupt_store_leaves_the_agent_working_and_list_and_load_failing_with_a_clear_error(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    db = settings.home / "sessions.db"
    db.parent.mkdir()
    garbage = b"definitely not SQLite\x00\xff" * 1000
    db.write_bytes(garbage)
    srv.enqueue(Reply.text("Still ", "working"))
    async with inproc_agent(settings) as agent:
        with anyio.fail_after(30):
            session_id = await open_session(agent, workspace)
            failures = []
            for call in (
                agent.conn.list_sessions(),
                agent.conn.load_session(session_id="sess_from_before", cwd=str(workspace), mcp_servers=[]),
                agent.conn.list_sessions(cwd=str(workspace)),
            ):
                with pytest.raises(RequestError) as failed:
                    await call
                failures.append(failed.value)
            assert await prompt(agent, session_id, "hello") == "end_turn"
            await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    assert [failure.code for failure in failures] == [-32603] * 3
    for failure in failures:
        assert str(db) in str(failure) and "not a database" in str(failure) and "CODER_AGENT_HOME" in str(failure)
    assert agent.client.agent_text(session_id) == "Still working"
    assert db.read_bytes() == garbage  # the user's file is left as it was


async def test_deleting_a_session_while_its_turn_runs_cancels_the_turn_and_the_session_stays_gone(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    srv.enqueue(Reply.stall(30, after_text=["Working"]))
    async with inproc_agent(settings) as agent, anyio.create_task_group() as tasks:
        with anyio.fail_after(30):
            session_id = await open_session(agent, workspace)
            turn = BackgroundPrompt(agent, session_id, "a long job")
            tasks.start_soon(turn.run)
            await agent.client.wait_for(lambda: agent.client.agent_text(session_id) == "Working", 30)
            assert await delete_session(agent, session_id) == {}
            assert (await turn.result(5)).stop_reason == "cancelled"
            listed = [info.session_id for info in (await agent.conn.list_sessions()).sessions]
            try:
                await agent.conn.load_session(session_id=session_id, cwd=str(workspace), mcp_servers=[])
                load_error = None
            except RequestError as error:
                load_error = error.code
    assert (listed, load_error) == ([], -32002)
