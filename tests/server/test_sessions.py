"""The session lifecycle: capabilities, titles, list and paging, resume, close, delete, fork."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from acp import PROTOCOL_VERSION, RequestError

from coder_agent.agent.usage import FALLBACK_CONTEXT_WINDOW
from coder_agent.config.settings import Settings
from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from coder_agent.store.base import SessionRecord
from tests.support.driving import (
    BackgroundPrompt,
    delete_session,
    kinds,
    open_session,
    prompt,
    reply_positions,
    seed_sessions,
    session_updates,
    spoken,
)
from tests.support.inproc import inproc_agent

pytestmark = pytest.mark.anyio


async def test_the_title_comes_from_the_first_prompt_that_reaches_the_model_not_from_a_slash_command(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    """`/compact`, `/undo` and a slip never reach the model: they title nothing; `/init` is titled by what the
    model was asked, not by its name."""
    srv.enqueue(Reply.text("Sure."), Reply.text("Wrote it."), Reply.text("Wrote it too."))
    async with inproc_agent(settings) as agent:
        with anyio.fail_after(30):
            session_id = await open_session(agent, workspace)
            for text in ("/compact", "/undo", "/rewind 3", "Fix the flaky login test", "/init"):
                await prompt(agent, session_id, text)
            other = await open_session(agent, workspace)
            await prompt(agent, other, "/init")
            listed = {info.session_id: info.title for info in (await agent.conn.list_sessions()).sessions}
    infos = [u for u in session_updates(agent.messages, session_id) if u["sessionUpdate"] == "session_info_update"]
    assert [info["title"] for info in infos] == ["Fix the flaky login test"]
    assert listed == {
        session_id: "Fix the flaky login test",
        other: "Write the project's AGENTS.md: the file coding agents read…",
    }


async def test_initialize_advertises_load_and_the_session_lifecycle_methods(
    settings: Settings, workspace: Path
) -> None:
    async with inproc_agent(settings) as agent:
        with anyio.fail_after(10):
            await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
    capabilities = agent.messages[0]["result"]["agentCapabilities"]
    assert capabilities["loadSession"] is True
    for method in ("list", "resume", "close", "delete"):
        assert capabilities["sessionCapabilities"][method] == {}


async def test_the_first_exchange_titles_the_session_in_an_update_and_in_the_list(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    srv.enqueue(Reply.text("Sure."), Reply.text("Again."))
    async with inproc_agent(settings) as agent:
        with anyio.fail_after(30):
            session_id = await open_session(agent, workspace)
            await prompt(agent, session_id, "Refactor the parser module.\nKeep the public API.")
            first_reply = reply_positions(agent)[-1]
            await prompt(agent, session_id, "And the lexer too")
            listed = await agent.conn.list_sessions(cwd=str(workspace))
    infos = [u for u in session_updates(agent.messages, session_id) if u["sessionUpdate"] == "session_info_update"]
    assert [info["title"] for info in infos] == ["Refactor the parser module"]  # once, after the first exchange
    info_at = next(i for i, m in enumerate(agent.messages) if m.get("params", {}).get("update") == infos[0])
    assert info_at < first_reply  # sent within the turn, before its reply
    [info] = listed.sessions
    assert (info.session_id, info.cwd, info.title) == (session_id, str(workspace), "Refactor the parser module")
    assert info.updated_at and info.updated_at >= infos[0]["updatedAt"]


async def test_list_filters_by_cwd_and_pages_with_the_cursor_without_gaps_or_repeats(
    settings: Settings, workspace: Path, tmp_path: Path
) -> None:
    folders = [str(tmp_path / name) for name in ("a", "b", "c")]
    seeded = [
        SessionRecord(
            id=f"sess_{i:04d}",
            cwd=folders[i % 3],
            title=f"Session {i}",
            created_at="2020-01-01T00:00:00.000Z",
            updated_at=f"2020-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}.000Z" if i % 7 else "2020-01-01T00:00:00.000Z",
        )
        for i in range(230)
    ]
    seed_sessions(settings.home, seeded)
    newest_first = [r.id for r in sorted(seeded, key=lambda r: (r.updated_at, r.id), reverse=True)]

    async def every_page(cwd: str | None) -> list[list[str]]:
        pages, cursor = [], None
        while True:
            page = await agent.conn.list_sessions(cwd=cwd, cursor=cursor)
            pages.append([info.session_id for info in page.sessions])
            if (cursor := page.next_cursor) is None:
                return pages

    async with inproc_agent(settings) as agent:
        with anyio.fail_after(20):
            await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
            everything = await every_page(None)
            in_b = await every_page(folders[1])
            nowhere = await agent.conn.list_sessions(cwd=str(workspace))
            with pytest.raises(RequestError) as bad_cursor:
                await agent.conn.list_sessions(cursor="not-a-cursor")
    assert len(everything) > 2, "the seeded sessions should need several pages"
    assert [sid for page in everything for sid in page] == newest_first
    assert [sid for page in in_b for sid in page] == [sid for sid in newest_first if int(sid[5:]) % 3 == 1]
    assert (nowhere.sessions, nowhere.next_cursor) == ([], None)
    assert bad_cursor.value.code == -32602


async def test_resume_restores_a_stored_session_without_replaying_and_takes_the_next_prompt(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    srv.enqueue(Reply.text("Answer ", "one"), Reply.text("Answer ", "two"))
    async with inproc_agent(settings) as first:
        with anyio.fail_after(30):
            session_id = await open_session(first, workspace)
            await prompt(first, session_id, "one")
    async with inproc_agent(settings) as second:
        with anyio.fail_after(30):
            await second.conn.initialize(protocol_version=PROTOCOL_VERSION)
            await second.conn.resume_session(session_id=session_id, cwd=str(workspace))
            resumed_at = reply_positions(second)[-1]
            stop = await prompt(second, session_id, "two")
    assert session_updates(second.messages[:resumed_at], session_id) == []
    assert stop == "end_turn"
    assert spoken(srv.requests[-1]) == [("user", "one"), ("assistant", "Answer one"), ("user", "two")]
    assert second.client.agent_text(session_id) == "Answer two"


async def test_unknown_sessions_are_resource_not_found_for_load_resume_fork_and_prompt(
    settings: Settings, workspace: Path
) -> None:
    async with inproc_agent(settings) as agent:
        with anyio.fail_after(20):
            await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
            calls = [
                agent.conn.load_session(session_id="sess_nope", cwd=str(workspace), mcp_servers=[]),
                agent.conn.resume_session(session_id="sess_nope", cwd=str(workspace)),
                agent.conn.fork_session(session_id="sess_nope", cwd=str(workspace)),
                prompt(agent, "sess_nope", "hello?"),
            ]
            codes = []
            for call in calls:
                with pytest.raises(RequestError) as failed:
                    await call
                codes.append(failed.value.code)
    assert codes == [-32002] * 4


async def test_a_closed_session_answers_a_prompt_with_not_found(settings: Settings, workspace: Path) -> None:
    async with inproc_agent(settings) as agent:
        with anyio.fail_after(20):
            session_id = await open_session(agent, workspace)
            await agent.conn.close_session(session_id=session_id)
            with pytest.raises(RequestError) as failed:
                await prompt(agent, session_id, "still there?")
    assert failed.value.code == -32002


async def test_closing_a_session_mid_turn_ends_its_prompt_as_cancelled(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    srv.enqueue(Reply.stall(30, after_text=["Working"]))
    async with inproc_agent(settings) as agent, anyio.create_task_group() as tasks:
        with anyio.fail_after(30):
            session_id = await open_session(agent, workspace)
            turn = BackgroundPrompt(agent, session_id, "a long job")
            tasks.start_soon(turn.run)
            await agent.client.wait_for(lambda: agent.client.agent_text(session_id) == "Working", 30)
        await agent.conn.close_session(session_id=session_id)
        done = await turn.result(5)
    assert done.stop_reason == "cancelled"


async def test_delete_forgets_the_session_for_load_and_list_and_unknown_ids_delete_quietly(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    srv.enqueue(Reply.text("Noted"))
    async with inproc_agent(settings) as agent:
        with anyio.fail_after(30):
            session_id = await open_session(agent, workspace)
            kept = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            await prompt(agent, session_id, "remember this")
            assert await delete_session(agent, session_id) == {}
            assert await delete_session(agent, "sess_never_existed") == {}
            listed = await agent.conn.list_sessions()
            with pytest.raises(RequestError) as load:
                await agent.conn.load_session(session_id=session_id, cwd=str(workspace), mcp_servers=[])
    assert [info.session_id for info in listed.sessions] == [kept]
    assert load.value.code == -32002


async def test_fork_carries_the_history_into_a_new_session_and_leaves_the_original_unchanged(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    srv.enqueue(Reply.text("Answer one"), Reply.text("Fork reply"), Reply.text("Original reply"))
    async with inproc_agent(settings) as agent:
        with anyio.fail_after(30):
            original = await open_session(agent, workspace)
            await prompt(agent, original, "one")
            fork = (await agent.conn.fork_session(session_id=original, cwd=str(workspace))).session_id
            agent.io.forgive_unstable_fork_result()
            await prompt(agent, fork, "two in the fork")
            await prompt(agent, original, "three in the original")
            titles = {info.session_id: info.title for info in (await agent.conn.list_sessions()).sessions}
    assert fork != original
    assert spoken(srv.requests[1]) == [("user", "one"), ("assistant", "Answer one"), ("user", "two in the fork")]
    assert spoken(srv.requests[2]) == [("user", "one"), ("assistant", "Answer one"), ("user", "three in the original")]
    assert titles == {original: "one", fork: "one (fork)"}


async def test_each_model_call_is_followed_by_a_usage_update_with_tokens_used_and_window_size(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    plan = {"entries": [{"content": "Read the code", "status": "in_progress"}]}
    srv.enqueue(Reply.tool_calls([tool_call("todo_write", plan, pieces=3)]), Reply.text("Planned", "."))
    async with inproc_agent(settings) as agent:
        with anyio.fail_after(30):
            session_id = await open_session(agent, workspace)
            assert await prompt(agent, session_id, "make a plan") == "end_turn"
    updates = session_updates(agent.messages, session_id)
    assert kinds(updates) == [
        "available_commands_update",  # after the session/new reply
        "usage_update",  # the first call asked for a tool: its usage comes before the tool runs
        "tool_call",
        "tool_call_update",
        "plan",
        "tool_call_update",
        "agent_message_chunk",
        "agent_message_chunk",
        "usage_update",
        "session_info_update",
    ]
    usages = [(u["used"], u["size"]) for u in updates if u["sessionUpdate"] == "usage_update"]
    assert usages == [(10 + 3, FALLBACK_CONTEXT_WINDOW), (10 + 2, FALLBACK_CONTEXT_WINDOW)]
