"""Failures a user can meet: no model, a rejected key, a flaky or broken provider, bad session ids and paths."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import PROTOCOL_VERSION, RequestError

from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.driving import BackgroundPrompt, open_session, prompt
from tests.support.inproc import inproc_agent

pytestmark = pytest.mark.anyio
FIRST_PROMPT_TIMEOUT = 30.0


async def test_without_a_model_the_agent_starts_but_a_prompt_fails_naming_the_model_setting(
    make_settings: Any, workspace: Path
) -> None:
    async with inproc_agent(make_settings(model=None)) as agent:
        with anyio.fail_after(10):
            init = await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
            session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
            with pytest.raises(RequestError) as failed:
                await prompt(agent, session.session_id, "hello?")
    assert init.protocol_version == 1
    assert session.session_id
    assert "CODER_AGENT_MODEL" in str(failed.value) and "coder-agent login" in str(failed.value)
    assert failed.value.code == -32000  # auth required: the editor offers its login
    assert failed.value.data == {"setting": "CODER_AGENT_MODEL", "details": str(failed.value)}


async def test_a_rejected_key_fails_at_once_as_auth_required_naming_the_login_and_the_key_setting(
    srv: ScriptedModelServer, make_settings: Any, workspace: Path
) -> None:
    """-32000, so that editors offer their login; the text in `data.details` too (Toad shows that one, and
    without it "the agent failed to start"); the provider's full stop is not doubled ("dashboard.. Set")."""
    words = "Incorrect API key provided. You can find your key on the dashboard."
    srv.enqueue(Reply.error(401, words), Reply.text("not used"))
    async with inproc_agent(make_settings(max_retries=3)) as agent:
        with anyio.fail_after(FIRST_PROMPT_TIMEOUT):
            session_id = await open_session(agent, workspace)
            with pytest.raises(RequestError) as failed:
                await prompt(agent, session_id, "hello?")
    message = str(failed.value)
    assert failed.value.code == -32000
    assert "CODER_AGENT_API_KEY" in message and "coder-agent login" in message
    assert "the dashboard. Log in again" in message and ".." not in message
    assert failed.value.data["details"] == message
    assert failed.value.data["status"] == 401
    assert len(srv.requests) == 1, "a 401 must not be retried"


async def test_every_refused_prompt_carries_its_text_in_data_details_too(
    srv: ScriptedModelServer, make_settings: Any, workspace: Path
) -> None:
    srv.enqueue(Reply.error(503, "overloaded"))
    async with inproc_agent(make_settings(max_retries=0)) as agent:
        with anyio.fail_after(FIRST_PROMPT_TIMEOUT):
            session_id = await open_session(agent, workspace)
            with pytest.raises(RequestError) as provider:
                await prompt(agent, session_id, "hello?")
            with pytest.raises(RequestError) as unknown:
                await prompt(agent, "sess_nobody_made_this", "hello?")
    for failed in (provider.value, unknown.value):
        assert failed.data["details"] == str(failed), failed.data
    assert provider.value.code == -32603 and "503" in provider.value.data["details"]
    assert unknown.value.data["sessionId"] == "sess_nobody_made_this"


async def test_a_transient_503_is_retried_and_the_turn_ends_normally(
    srv: ScriptedModelServer, make_settings: Any, workspace: Path
) -> None:
    srv.enqueue(Reply.error(503, "overloaded"), Reply.text("Worked ", "anyway"))
    async with inproc_agent(make_settings()) as agent:
        with anyio.fail_after(FIRST_PROMPT_TIMEOUT):
            session_id = await open_session(agent, workspace)
            stop_reason = await prompt(agent, session_id, "hello?")
    assert stop_reason == "end_turn"
    assert len(srv.requests) == 2
    assert agent.client.agent_text(session_id) == "Worked anyway"


async def test_when_retries_run_out_the_prompt_fails_and_the_session_still_works(
    srv: ScriptedModelServer, make_settings: Any, workspace: Path
) -> None:
    srv.enqueue(*[Reply.error(503, "overloaded")] * 3, Reply.text("Back ", "again"))
    async with inproc_agent(make_settings(max_retries=2)) as agent:
        with anyio.fail_after(FIRST_PROMPT_TIMEOUT):
            session_id = await open_session(agent, workspace)
            with pytest.raises(RequestError) as failed:
                await prompt(agent, session_id, "hello?")
            requests_when_failed = len(srv.requests)
            stop_reason = await prompt(agent, session_id, "and now?")
    assert requests_when_failed == 3  # the first try and two retries
    assert "503" in str(failed.value)
    assert stop_reason == "end_turn"
    assert agent.client.agent_text(session_id) == "Back again"


async def test_a_stream_cut_mid_reply_fails_the_prompt_and_the_session_still_works(
    srv: ScriptedModelServer, make_settings: Any, workspace: Path
) -> None:
    srv.enqueue(Reply.cut_after("Half ", "a reply"), Reply.text("Whole reply"))
    async with inproc_agent(make_settings()) as agent:
        with anyio.fail_after(FIRST_PROMPT_TIMEOUT):
            session_id = await open_session(agent, workspace)
            with pytest.raises(RequestError) as failed:
                await prompt(agent, session_id, "hello?")
            requests_when_failed = len(srv.requests)
            stop_reason = await prompt(agent, session_id, "again?")
    assert failed.value.code == -32603
    assert requests_when_failed == 1, "text was shown already, so a retry would show it twice"
    assert stop_reason == "end_turn"
    assert agent.client.agent_text(session_id) == "Half a replyWhole reply"
    messages = srv.requests[1].body["messages"]
    assert [(m["role"], m["content"]) for m in messages[1:]] == [
        ("user", "hello?"),
        ("assistant", "Half a reply"),
        ("user", "again?"),
    ]


async def test_a_model_that_never_answers_fails_the_prompt_after_the_request_timeout(
    srv: ScriptedModelServer, make_settings: Any, workspace: Path
) -> None:
    srv.enqueue(*[Reply.stall(30)] * 2)
    # Long enough for the retry to reach the model server, which shares this process (and its GIL) with the agent.
    settings = make_settings(request_timeout=2.0, max_retries=1)
    async with inproc_agent(settings) as agent:
        with anyio.fail_after(FIRST_PROMPT_TIMEOUT):
            session_id = await open_session(agent, workspace)
            with pytest.raises(RequestError) as failed:
                await prompt(agent, session_id, "hello?")
    assert "in time" in str(failed.value)
    assert len(srv.requests) == 2


async def test_a_stream_that_stalls_after_some_text_fails_after_the_request_timeout_without_a_retry(
    srv: ScriptedModelServer, make_settings: Any, workspace: Path
) -> None:
    srv.enqueue(Reply.stall(30, after_text=["Half "]), Reply.text("Next"))
    settings = make_settings(request_timeout=1.0, max_retries=2)
    async with inproc_agent(settings) as agent:
        with anyio.fail_after(FIRST_PROMPT_TIMEOUT):
            session_id = await open_session(agent, workspace)
            with pytest.raises(RequestError):
                await prompt(agent, session_id, "hello?")
            requests_when_failed = len(srv.requests)
            stop_reason = await prompt(agent, session_id, "again?")
    assert requests_when_failed == 1, "text was shown already, so a retry would show it twice"
    assert stop_reason == "end_turn"
    assert agent.client.agent_text(session_id) == "Half Next"


async def test_a_second_prompt_while_one_runs_is_invalid_params_and_leaves_the_running_turn_alone(
    srv: ScriptedModelServer, make_settings: Any, workspace: Path
) -> None:
    srv.enqueue(Reply.stall(30, after_text=["Working "]))
    async with inproc_agent(make_settings()) as agent, anyio.create_task_group() as tasks:
        with anyio.fail_after(FIRST_PROMPT_TIMEOUT):
            session_id = await open_session(agent, workspace)
            running = BackgroundPrompt(agent, session_id, "a long job")
            tasks.start_soon(running.run)
            await agent.client.wait_for(lambda: agent.client.agent_text(session_id) == "Working ", FIRST_PROMPT_TIMEOUT)
            with pytest.raises(RequestError) as refused:
                await prompt(agent, session_id, "and another")
        assert not running.done.is_set()
        await agent.conn.cancel(session_id=session_id)
        first = await running.result(5)
    assert refused.value.code == -32602
    assert first.stop_reason == "cancelled"
    assert len(srv.requests) == 1  # the refused prompt never reached the model


async def test_a_prompt_for_an_unknown_session_is_resource_not_found(make_settings: Any, workspace: Path) -> None:
    async with inproc_agent(make_settings()) as agent:
        with anyio.fail_after(10):
            await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
            with pytest.raises(RequestError) as failed:
                await prompt(agent, "sess_nobody_made_this", "hello?")
    assert failed.value.code == -32002
    assert "sess_nobody_made_this" in str(failed.value)


@pytest.mark.parametrize("cwd", ["relative/dir", ".", ""])
async def test_session_new_with_a_relative_cwd_is_invalid_params(make_settings: Any, workspace: Path, cwd: str) -> None:
    async with inproc_agent(make_settings(model=None)) as agent:
        with anyio.fail_after(10):
            await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
            with pytest.raises(RequestError) as failed:
                await agent.conn.new_session(cwd=cwd, mcp_servers=[])
            with pytest.raises(RequestError) as failed_extra:
                await agent.conn.new_session(cwd=str(workspace), additional_directories=["lib"], mcp_servers=[])
            ok = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    assert failed.value.code == -32602
    assert "cwd" in str(failed.value)
    assert failed_extra.value.code == -32602
    assert ok.session_id
