"""A GPT-5 session through the protocol, in process: its calls go to OpenAI's Responses API (not litellm's Chat
Completions), its thinking is shown as thought chunks, its reasoning goes back with every later call (across turns
and a session loaded again), and each session's calls carry its own prompt cache key."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import text_block

from coder_agent.config.settings import Settings
from coder_agent.scripted.script import FinishStep, ReasoningStep, Reply, TextStep, UsageStep, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.driving import open_session, prompt, texts, updates
from tests.support.inproc import inproc_agent

pytestmark = pytest.mark.anyio

MODEL = "openai/gpt-5-mini"


def thinking_then(*steps: Any, finish: Any = "stop") -> Reply:
    usage = UsageStep(prompt_tokens=50, completion_tokens=20, reasoning_tokens=10)
    thought = ReasoningStep(pieces=["Thinking ", "it over."])
    return Reply(steps=[thought, *steps, FinishStep(finish_reason=finish), usage])


def reasoning_sent(body: dict[str, Any]) -> list[str]:
    return [item["encrypted_content"] for item in body["input"] if item["type"] == "reasoning"]


async def test_a_gpt5_session_thinks_aloud_calls_a_tool_and_sends_its_reasoning_back(
    srv: ScriptedModelServer, make_settings: Callable[..., Settings], workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("remember the milk\n")
    srv.enqueue(
        thinking_then(tool_call("read_file", {"path": "notes.txt"}, id="call_read"), finish="tool_calls"),
        thinking_then(TextStep(pieces=["It says: ", "remember the milk."])),
        Reply.text("You asked me to read notes.txt."),
    )
    async with inproc_agent(make_settings(model=MODEL)) as agent:
        with anyio.fail_after(60):
            session_id = await open_session(agent, workspace)
            assert await prompt(agent, session_id, "What is in notes.txt?") == "end_turn"
            assert await prompt(agent, session_id, "What did I ask?") == "end_turn"
    assert [request.path for request in srv.requests] == ["/v1/responses"] * 3
    thoughts = texts(updates(agent, session_id, "agent_thought_chunk"))
    assert thoughts == ["Thinking ", "it over.", "Thinking ", "it over."]
    answer = "".join(texts(updates(agent, session_id, "agent_message_chunk")))
    assert "It says: remember the milk." in answer and "You asked me to read notes.txt." in answer
    first, second, third = (request.body for request in srv.requests)
    assert reasoning_sent(first) == []
    assert len(reasoning_sent(second)) == 1  # turn 1's thought, before the call it led to
    assert len(reasoning_sent(third)) == 2 and reasoning_sent(third)[0] == reasoning_sent(second)[0]  # both of turn 1
    kinds = [item["type"] for item in second["input"]]
    assert kinds[-3:] == ["reasoning", "function_call", "function_call_output"]
    assert {body["prompt_cache_key"] for body in (first, second, third)} == {session_id}
    assert (first["store"], first["include"]) == (False, ["reasoning.encrypted_content"])


async def test_each_session_has_its_own_cache_key_and_a_loaded_one_keeps_its_reasoning(
    srv: ScriptedModelServer, make_settings: Callable[..., Settings], workspace: Path
) -> None:
    srv.enqueue(thinking_then(TextStep(pieces=["one"])), Reply.text("two"), Reply.text("three"))
    settings = make_settings(model=MODEL)
    async with inproc_agent(settings) as agent:
        with anyio.fail_after(60):
            first = await open_session(agent, workspace)
            await prompt(agent, first, "hi")
            second = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            await prompt(agent, second, "hello")
    async with inproc_agent(settings) as agent:  # a new agent process: the session comes from the store
        with anyio.fail_after(60):
            await agent.conn.initialize(protocol_version=1)
            await agent.conn.load_session(session_id=first, cwd=str(workspace), mcp_servers=[])
            await agent.conn.prompt(session_id=first, prompt=[text_block("again")])
    keys = [request.body["prompt_cache_key"] for request in srv.requests]
    assert keys == [first, second, first] and first != second
    # the loaded session's history still holds turn 1's reasoning, and the server took it as its own
    assert len(reasoning_sent(srv.requests[2].body)) == 1
    assert texts(updates(agent, first, "agent_message_chunk"))[-1] == "three"


async def test_the_sessions_thought_level_is_the_reasoning_effort(
    srv: ScriptedModelServer, make_settings: Callable[..., Settings], workspace: Path
) -> None:
    srv.enqueue(Reply.text("quick"), Reply.text("deep"))
    async with inproc_agent(make_settings(model=MODEL)) as agent:
        with anyio.fail_after(60):
            session_id = await open_session(agent, workspace)
            await prompt(agent, session_id, "hi")
            chosen = await agent.conn.set_config_option(config_id="thought_level", session_id=session_id, value="high")
            await prompt(agent, session_id, "think hard")
    [level] = [option for option in chosen.config_options if option.id == "thought_level"]
    assert level.current_value == "high"
    first, second = (request.body for request in srv.requests)
    assert first["reasoning"] == {"summary": "auto"}  # no level chosen: OpenAI's default effort
    assert second["reasoning"] == {"effort": "high", "summary": "auto"}
