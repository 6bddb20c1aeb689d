"""`session/cancel`: the running turn stops at once, the model's HTTP stream is closed, the session lives on."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from acp import text_block

from coder_agent.config.settings import Settings
from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.driving import BackgroundPrompt, initialize, open_session, request, updates
from tests.support.inproc import inproc_agent, inproc_raw

pytestmark = pytest.mark.anyio
FIRST_PROMPT_TIMEOUT = 30.0

CANCEL_DEADLINE = 2.0  # seconds from session/cancel to the prompt's answer


async def disconnected(srv: ScriptedModelServer, count: int = 1, timeout: float = 5.0) -> bool:
    """Whether the scripted server saw the client hang up mid-reply (waited for in a worker thread)."""
    return await anyio.to_thread.run_sync(lambda: srv.wait_disconnect(timeout, count))


async def test_cancel_mid_stream_answers_cancelled_promptly_and_closes_the_model_stream(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    srv.enqueue(Reply.stall(30, after_text=["Partial ", "answer"], then_text=["never shown"]))
    async with inproc_agent(settings) as agent, anyio.create_task_group() as tasks:
        with anyio.fail_after(FIRST_PROMPT_TIMEOUT):
            session_id = await open_session(agent, workspace)
            turn = BackgroundPrompt(agent, session_id, "tell me a long story")
            tasks.start_soon(turn.run)
            await agent.client.wait_for(
                lambda: agent.client.agent_text(session_id) == "Partial answer", FIRST_PROMPT_TIMEOUT
            )
        started = anyio.current_time()
        await agent.conn.cancel(session_id=session_id)
        done = await turn.result(CANCEL_DEADLINE)
        elapsed = anyio.current_time() - started
        assert await disconnected(srv), "the model's HTTP stream was left open after the cancel"
    assert done.stop_reason == "cancelled"
    assert elapsed < CANCEL_DEADLINE
    assert agent.client.agent_text(session_id) == "Partial answer"
    assert len(srv.requests) == 1  # a cancel is not a failure: nothing was retried


async def test_a_cancelled_session_takes_the_next_prompt_with_the_partial_reply_in_context(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    srv.enqueue(Reply.stall(30, after_text=["Half ", "of it"]), Reply.text("Fresh ", "answer"))
    async with inproc_agent(settings) as agent, anyio.create_task_group() as tasks:
        with anyio.fail_after(FIRST_PROMPT_TIMEOUT):
            session_id = await open_session(agent, workspace)
            turn = BackgroundPrompt(agent, session_id, "first")
            tasks.start_soon(turn.run)
            await agent.client.wait_for(
                lambda: agent.client.agent_text(session_id) == "Half of it", FIRST_PROMPT_TIMEOUT
            )
        await agent.conn.cancel(session_id=session_id)
        assert (await turn.result(CANCEL_DEADLINE)).stop_reason == "cancelled"
        with anyio.fail_after(10):
            after = await agent.conn.prompt(session_id=session_id, prompt=[text_block("second")])
    assert after.stop_reason == "end_turn"
    messages = srv.requests[1].body["messages"]
    assert [(m["role"], m["content"]) for m in messages[1:]] == [
        ("user", "first"),
        ("assistant", "Half of it"),
        ("user", "second"),
    ]
    chunks = updates(agent, session_id, "agent_message_chunk")
    assert len({chunk["messageId"] for chunk in chunks}) == 2  # the new reply is a new message


async def test_cancel_while_waiting_for_the_model_ends_the_turn_and_keeps_no_empty_reply(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    srv.enqueue(Reply.stall(30), Reply.text("Answer"))  # the first reply holds back even its headers
    async with inproc_agent(settings) as agent, anyio.create_task_group() as tasks:
        with anyio.fail_after(FIRST_PROMPT_TIMEOUT):
            session_id = await open_session(agent, workspace)
            turn = BackgroundPrompt(agent, session_id, "first")
            tasks.start_soon(turn.run)
            assert await anyio.to_thread.run_sync(lambda: srv.wait_for_requests(1, FIRST_PROMPT_TIMEOUT))
        await agent.conn.cancel(session_id=session_id)
        done = await turn.result(CANCEL_DEADLINE)
        assert await disconnected(srv), "the pending model request was not abandoned"
        with anyio.fail_after(10):
            after = await agent.conn.prompt(session_id=session_id, prompt=[text_block("second")])
    assert done.stop_reason == "cancelled"
    assert after.stop_reason == "end_turn"
    assert updates(agent, session_id, "agent_message_chunk")[0]["content"]["text"] == "Answer"
    roles = [m["role"] for m in srv.requests[1].body["messages"]]
    assert "assistant" not in roles


async def test_a_cancel_for_an_idle_or_unknown_session_is_ignored_and_does_not_touch_the_next_turn(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    srv.enqueue(Reply.text("Still ", "here"))
    async with inproc_agent(settings) as agent:
        with anyio.fail_after(FIRST_PROMPT_TIMEOUT):
            session_id = await open_session(agent, workspace)
            await agent.conn.cancel(session_id=session_id)  # nothing running yet
            await agent.conn.cancel(session_id="sess_does_not_exist")
            done = await agent.conn.prompt(session_id=session_id, prompt=[text_block("hi")])
    assert done.stop_reason == "end_turn"
    assert agent.client.agent_text(session_id) == "Still here"
    # session/cancel is a notification: no reply of any kind, not even an error.
    assert [m["id"] for m in agent.messages if "id" in m] == [0, 1, 2]


async def test_cancel_during_a_retry_backoff_ends_the_turn_without_calling_the_model_again(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    srv.enqueue(Reply.error(503, "overloaded"), Reply.text("Answer"))
    async with (
        inproc_agent(settings.model_copy(update={"retry_base_delay": 30.0})) as agent,
        anyio.create_task_group() as tasks,
    ):
        with anyio.fail_after(FIRST_PROMPT_TIMEOUT):
            session_id = await open_session(agent, workspace)
            turn = BackgroundPrompt(agent, session_id, "first")
            tasks.start_soon(turn.run)
            assert await anyio.to_thread.run_sync(lambda: srv.wait_for_requests(1, FIRST_PROMPT_TIMEOUT))
        await agent.conn.cancel(session_id=session_id)  # the agent now waits 30 s before its retry
        done = await turn.result(CANCEL_DEADLINE)
        with anyio.fail_after(10):
            after = await agent.conn.prompt(session_id=session_id, prompt=[text_block("second")])
    assert done.stop_reason == "cancelled"
    assert after.stop_reason == "end_turn"
    # The second model call is the new prompt, not a late retry of the cancelled one.
    assert len(srv.requests) == 2
    assert srv.requests[1].body["messages"][-1] == {"role": "user", "content": "second"}


async def test_a_cancel_that_arrives_right_behind_its_prompt_still_cancels_the_turn(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    srv.enqueue(Reply.stall(30, after_text=["Too late"]))
    async with inproc_raw(settings) as raw:
        await raw.send_json(initialize(0))
        await raw.send_json(request(1, "session/new", {"cwd": str(workspace), "mcpServers": []}))
        await raw.read_message()
        session_id = (await raw.read_message())["result"]["sessionId"]
        prompt = request(2, "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]})
        cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session_id}}
        await raw.send_bytes(f"{json.dumps(prompt)}\n{json.dumps(cancel)}\n".encode())  # one write: one read
        with anyio.fail_after(5):
            while (reply := await raw.read_message(5)).get("id") != 2:
                pass
    assert reply.get("result") == {"stopReason": "cancelled"}, reply
