"""Compaction: a long session in a tiny window compacts again and again, loses nothing the model must answer,
shows each compaction, keeps it across load and fork, and survives the provider's context-window error."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import PROTOCOL_VERSION, RequestError, text_block
from acp.schema import ToolCallProgress, ToolCallStart, UsageUpdate

from coder_agent.config.settings import Settings
from coder_agent.scripted.records import estimated_tokens
from coder_agent.scripted.script import HttpErrorStep, Reply
from coder_agent.scripted.server import ScriptedModelServer
from coder_agent.scripted.worker import SUMMARY_MARK, WorkerModel
from coder_agent.store.sqlite import SqliteSessionStore
from tests.support.inproc import InprocAgent, inproc_agent
from tests.support.inproc import test_settings as agent_settings

pytestmark = pytest.mark.anyio

WINDOW = 16_000  # tokens; the system prompt and the tools' descriptions take ~3,800 of them
FILLER = "Keep the answer short; this sentence only makes the prompt longer. " * 3


def task(n: int) -> str:
    return f"TASK {n}: read the notes and say when you are done. {FILLER}"


@pytest.fixture
def notes(workspace: Path) -> Path:
    path = workspace / "notes.txt"
    path.write_text("".join(f"line {i}: the notes say nothing of importance here\n" for i in range(40)))
    return path


async def start(agent: InprocAgent, workspace: Path) -> str:
    await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
    return (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id


def compactions(updates: list[Any]) -> list[Any]:
    """The compactions' final states, as the editor was shown them."""
    return [u for u in updates if isinstance(u, ToolCallProgress) and u.tool_call_id.startswith("compact_")]


def compaction_started(agent: InprocAgent, session_id: str) -> bool:
    updates = agent.client.updates(session_id)
    return any(isinstance(u, ToolCallStart) and u.tool_call_id.startswith("compact_") for u in updates)


def stored_messages(home: Path, session_id: str) -> list[dict[str, Any]]:
    store = SqliteSessionStore(home / "sessions.db")
    try:
        return [json.loads(body) for body in store.messages(session_id)]
    finally:
        store.close()


def model_requests(server: ScriptedModelServer) -> list[list[dict[str, Any]]]:
    """The messages of each request that was not a summary."""
    return [r.body["messages"] for r in server.requests if SUMMARY_MARK not in str(r.body["messages"][0]["content"])]


async def test_a_long_session_in_a_tiny_window_compacts_often_and_loses_nothing_the_model_must_answer(
    tmp_path: Path, workspace: Path, notes: Path
) -> None:
    worker = WorkerModel(str(notes))
    with ScriptedModelServer(respond=worker, count_prompt_tokens=True, context_limit=WINDOW) as server:
        settings = agent_settings(tmp_path / "home", server.url, context_window=WINDOW, default_mode="bypass")
        async with inproc_agent(settings) as agent:
            session_id = await start(agent, workspace)
            for n in range(1, 41):
                response = await agent.conn.prompt(session_id=session_id, prompt=[text_block(task(n))])
                assert response.stop_reason == "end_turn"
            updates = agent.client.updates(session_id)
    assert worker.problems == []
    assert worker.answered == list(range(1, 41))
    done = compactions(updates)
    assert len(done) >= 3, f"only {len(done)} compactions"
    assert all(u.status == "completed" for u in done)
    starts = [u for u in updates if isinstance(u, ToolCallStart) and u.tool_call_id.startswith("compact_")]
    assert [u.status for u in starts] == ["in_progress"] * len(done)  # shown while it runs
    assert all("freed" in u.content[0].content.text for u in done)  # and what it freed
    assert all(u.content[1].content.text.startswith("Tasks handled so far: ") for u in done)
    sizes = [u.used for u in updates if isinstance(u, UsageUpdate)]
    assert max(sizes) <= WINDOW * 0.8 + 1_000, "the context went well past the threshold"
    assert any(later < earlier for earlier, later in itertools.pairwise(sizes)), "usage never dropped"
    assert all(len(json.dumps(request)) // 4 <= WINDOW for request in model_requests(server))
    stored = stored_messages(settings.home, session_id)
    assert stored[0]["role"] == "user" and stored[0]["parts"][0]["text"].startswith("<conversation-summary>")
    assert "Done with task 40." in stored[-1]["text"]


async def test_load_after_compaction_replays_what_the_user_saw_and_continues_from_the_summary(
    tmp_path: Path, workspace: Path, notes: Path
) -> None:
    worker = WorkerModel(str(notes))
    with ScriptedModelServer(respond=worker, count_prompt_tokens=True) as server:
        settings = agent_settings(tmp_path / "home", server.url, context_window=WINDOW, default_mode="bypass")
        async with inproc_agent(settings) as agent:
            session_id = await start(agent, workspace)
            for n in range(1, 16):
                await agent.conn.prompt(session_id=session_id, prompt=[text_block(task(n))])
            shown = agent.client.updates(session_id)
        assert compactions(shown), "no compaction happened: the test proves nothing"
        async with inproc_agent(settings) as agent:
            await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
            await agent.conn.load_session(session_id=session_id, cwd=str(workspace), mcp_servers=[])
            replayed = agent.client.updates(session_id)
            await agent.conn.prompt(session_id=session_id, prompt=[text_block(task(16))])
            fork = await agent.conn.fork_session(session_id=session_id, cwd=str(workspace), mcp_servers=[])
            await agent.conn.prompt(session_id=fork.session_id, prompt=[text_block(task(17))])
            agent.io.forgive_unstable_fork_result()
    assert worker.problems == []
    assert worker.answered == list(range(1, 18))
    user_texts = [u.content.text for u in replayed if getattr(u, "session_update", "") == "user_message_chunk"]
    assert user_texts == [task(n) for n in range(1, 16)]  # every prompt the user typed, compacted or not
    assert len(compactions(replayed)) == len(compactions(shown))
    after_load, in_fork = model_requests(server)[-4], model_requests(server)[-2]
    for request in (after_load, in_fork):
        assert request[1]["content"].startswith("<conversation-summary>")  # the model goes on from the summary
        assert "TASK 1:" not in json.dumps(request)


async def test_a_context_window_error_compacts_once_and_retries_instead_of_failing(
    tmp_path: Path, workspace: Path, notes: Path
) -> None:
    worker = WorkerModel(str(notes))
    with ScriptedModelServer(respond=worker, count_prompt_tokens=True) as server:
        # The agent believes the window is large; the provider's real limit is what the session reaches.
        settings = agent_settings(tmp_path / "home", server.url, context_window=200_000, default_mode="bypass")
        async with inproc_agent(settings) as agent:
            session_id = await start(agent, workspace)
            for n in range(1, 6):
                await agent.conn.prompt(session_id=session_id, prompt=[text_block(task(n))])
            server.context_limit = estimated_tokens(server.requests[-1].body) + 20  # task 6 will not fit
            await agent.conn.prompt(session_id=session_id, prompt=[text_block(task(6))])
            updates = agent.client.updates(session_id)
    refused = [r for r in server.requests if estimated_tokens(r.body) > server.context_limit]
    assert len(refused) == 1  # one refusal, then a compaction and the same call again, which fits
    assert [u.status for u in compactions(updates)] == ["completed"]
    assert worker.answered == list(range(1, 7)) and worker.problems == []


async def test_a_compaction_that_fails_is_reported_and_leaves_the_history_as_it_was(
    tmp_path: Path, workspace: Path, notes: Path
) -> None:
    worker = WorkerModel(str(notes))

    def respond(request: Any) -> Reply:
        if SUMMARY_MARK in str(request.body["messages"][0]["content"]):
            return Reply(steps=[HttpErrorStep(status=400, message="summaries are off today")])
        return worker(request)

    with ScriptedModelServer(respond=respond, count_prompt_tokens=True) as server:
        settings = agent_settings(tmp_path / "home", server.url, context_window=WINDOW, default_mode="bypass")
        async with inproc_agent(settings) as agent:
            session_id = await start(agent, workspace)
            for n in range(1, 4):
                await agent.conn.prompt(session_id=session_id, prompt=[text_block(task(n))])
            before = stored_messages(settings.home, session_id)
            with pytest.raises(RequestError) as refused:
                await agent.conn.prompt(session_id=session_id, prompt=[text_block("/compact")])
            updates = agent.client.updates(session_id)
            after = stored_messages(settings.home, session_id)
            await agent.conn.prompt(session_id=session_id, prompt=[text_block(task(4))])
    assert "summaries are off today" in str(refused.value)
    [failed] = compactions(updates)
    assert failed.status == "failed"
    assert "The conversation is unchanged" in failed.content[0].content.text
    assert after == before
    assert "TASK 1:" in json.dumps(model_requests(server)[-1])  # the model still sees everything
    assert worker.answered == [1, 2, 3, 4]


async def test_compact_on_demand_keeps_the_focus_in_the_summary_request_and_frees_the_context(
    tmp_path: Path, workspace: Path, notes: Path
) -> None:
    worker = WorkerModel(str(notes))
    with ScriptedModelServer(respond=worker, count_prompt_tokens=True) as server:
        settings = agent_settings(tmp_path / "home", server.url, default_mode="bypass")
        async with inproc_agent(settings) as agent:
            session_id = await start(agent, workspace)
            await agent.conn.prompt(session_id=session_id, prompt=[text_block("/compact")])
            nothing = agent.client.agent_text(session_id)
            for n in range(1, 4):
                await agent.conn.prompt(session_id=session_id, prompt=[text_block(task(n))])
            response = await agent.conn.prompt(session_id=session_id, prompt=[text_block("/compact the notes file")])
            updates = agent.client.updates(session_id)
    assert "Nothing to compact yet" in nothing
    assert response.stop_reason == "end_turn"
    [summary_request] = [r for r in server.requests if SUMMARY_MARK in str(r.body["messages"][0]["content"])]
    assert "keep this in focus: the notes file" in summary_request.body["messages"][1]["content"]
    [done] = compactions(updates)
    assert done.status == "completed"
    last_usage = [u for u in updates if isinstance(u, UsageUpdate)][-1]
    assert last_usage.used < [u for u in updates if isinstance(u, UsageUpdate)][-2].used


async def test_a_tool_result_is_cut_to_a_share_of_the_window_and_the_model_is_told(
    tmp_path: Path, workspace: Path
) -> None:
    big = workspace / "big.txt"
    big.write_text("".join(f"row {i:05d} of a long file\n" for i in range(3000)))
    worker = WorkerModel(str(big))
    with ScriptedModelServer(respond=worker, count_prompt_tokens=True) as server:
        settings = agent_settings(tmp_path / "home", server.url, context_window=WINDOW, default_mode="bypass")
        async with inproc_agent(settings) as agent:
            session_id = await start(agent, workspace)
            await agent.conn.prompt(session_id=session_id, prompt=[text_block(task(1))])
    answer = model_requests(server)[-1][-1]
    assert answer["role"] == "tool"
    assert len(answer["content"]) <= WINDOW * 0.1 * 4 + 300
    assert "characters cut here, to fit the model's context window" in answer["content"]


async def test_a_compaction_cancelled_midway_leaves_the_history_as_it_was_and_says_so(
    tmp_path: Path, workspace: Path, notes: Path
) -> None:
    worker = WorkerModel(str(notes))

    def respond(request: Any) -> Reply:
        if SUMMARY_MARK in str(request.body["messages"][0]["content"]):
            return Reply.stall(30, after_text=["Tasks "])
        return worker(request)

    with ScriptedModelServer(respond=respond, count_prompt_tokens=True) as server:
        settings = agent_settings(tmp_path / "home", server.url, default_mode="bypass")
        async with inproc_agent(settings) as agent:
            session_id = await start(agent, workspace)
            for n in range(1, 3):
                await agent.conn.prompt(session_id=session_id, prompt=[text_block(task(n))])
            before = stored_messages(settings.home, session_id)
            async with anyio.create_task_group() as tasks:

                async def compact() -> None:
                    response = await agent.conn.prompt(session_id=session_id, prompt=[text_block("/compact")])
                    assert response.stop_reason == "cancelled"

                tasks.start_soon(compact)
                await agent.client.wait_for(lambda: compaction_started(agent, session_id), timeout=30)
                await agent.conn.cancel(session_id=session_id)
            updates = agent.client.updates(session_id)
            after = stored_messages(settings.home, session_id)
    [cancelled] = compactions(updates)
    assert cancelled.status == "failed" and cancelled.content[0].content.text.startswith("Cancelled")
    assert after == before


async def test_compact_on_a_short_conversation_says_there_is_nothing_to_free_and_keeps_it(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    """A greeting and its answer: no summary could be smaller, so none is asked for and nothing is swapped."""
    srv.enqueue(Reply.text("Hi! What shall we work on?"))
    async with inproc_agent(settings) as agent:
        session_id = await start(agent, workspace)
        await agent.conn.prompt(session_id=session_id, prompt=[text_block("hello")])
        before = stored_messages(settings.home, session_id)
        response = await agent.conn.prompt(session_id=session_id, prompt=[text_block("/compact")])
        said = agent.client.agent_text(session_id)
        after = stored_messages(settings.home, session_id)
        updates = agent.client.updates(session_id)
    assert response.stop_reason == "end_turn"
    assert len(srv.requests) == 1  # no summary was asked for
    assert said.startswith("Hi! What shall we work on?Nothing to compact yet: the conversation is too short")
    assert said.endswith("It is unchanged.")
    assert compactions(updates) == []
    assert after == before


async def test_a_summary_no_smaller_than_what_it_replaces_is_not_kept_and_the_note_says_so(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    """ "~3,877 -> ~3,909 tokens ... ~0 freed" and the history swapped: both sides are one measure now, and a
    summary that frees nothing leaves the conversation as it was."""
    srv.enqueue(Reply.text("Noted. " * 100), Reply.text("Noted again. " * 100), Reply.text("A long summary. " * 400))
    async with inproc_agent(settings) as agent:
        session_id = await start(agent, workspace)
        for text in ("first: " + FILLER, "second: " + FILLER):
            await agent.conn.prompt(session_id=session_id, prompt=[text_block(text)])
        before = stored_messages(settings.home, session_id)
        response = await agent.conn.prompt(session_id=session_id, prompt=[text_block("/compact")])
        after = stored_messages(settings.home, session_id)
        updates = agent.client.updates(session_id)
    assert response.stop_reason == "end_turn"
    assert len(srv.requests) == 3  # the summary was asked for
    [done] = compactions(updates)
    note = done.content[0].content.text
    assert done.status == "completed" and note.startswith("Nothing to free: ") and note.endswith("unchanged.")
    assert after == before
