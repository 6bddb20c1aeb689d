"""`coder-agent acp` on `openai/gpt-5-mini`: two turns with a tool call over OpenAI's Responses API, under the
official SDK client (every line the agent writes checked against the ACP schema)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import PROTOCOL_VERSION, text_block

from coder_agent.scripted.script import FinishStep, ReasoningStep, Reply, TextStep, UsageStep, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.acp_client import raw_agent, spawn_agent
from tests.support.agent_env import FIRST_PROMPT_TIMEOUT, EnvFactory, texts, updates
from tests.support.driving import tool_calls
from tests.support.early_stage import chunks, held_env, held_messages, reply_to, start
from tests.support.editor_client import EditorClient

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


def thinking(thought: str, *steps: Any, finish: Any = "stop") -> Reply:
    usage = UsageStep(prompt_tokens=900, completion_tokens=60, reasoning_tokens=40)
    return Reply(steps=[ReasoningStep(pieces=[thought]), *steps, FinishStep(finish_reason=finish), usage])


async def test_two_turns_with_a_tool_call_keep_the_reasoning_and_show_the_thinking(
    srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path
) -> None:
    (workspace / "todo.txt").write_text("ship it\n")
    srv.enqueue(
        thinking(
            "I should read the file.", tool_call("read_file", {"path": "todo.txt"}, id="call_todo"), finish="tool_calls"
        ),
        thinking("It is short.", TextStep(pieces=["It says ", "ship it."])),
        thinking("Recall turn one.", TextStep(pieces=["You asked about todo.txt."])),
    )
    env = agent_env(CODER_AGENT_MODEL="openai/gpt-5-mini")
    async with anyio.create_task_group() as tg:
        client = EditorClient(tg)
        async with spawn_agent(env, client=client, cwd=workspace) as agent:
            with anyio.fail_after(FIRST_PROMPT_TIMEOUT):
                await agent.conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=client.capabilities)
                session_id = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
                first = await agent.conn.prompt(session_id=session_id, prompt=[text_block("What is in todo.txt?")])
                second = await agent.conn.prompt(session_id=session_id, prompt=[text_block("What did I ask?")])
            thoughts = texts(updates(agent, session_id, "agent_thought_chunk"))
            said = "".join(texts(updates(agent, session_id, "agent_message_chunk")))
            [read] = tool_calls(agent).values()
        tg.cancel_scope.cancel()
    assert (first.stop_reason, second.stop_reason) == ("end_turn", "end_turn")
    assert thoughts == ["I should read the file.", "It is short.", "Recall turn one."]
    assert "It says ship it." in said and "You asked about todo.txt." in said
    assert read["statuses"][-1] == "completed"
    assert [request.path for request in srv.requests] == ["/v1/responses"] * 3
    bodies = [request.body for request in srv.requests]
    turn2 = bodies[2]["input"]
    reasoning = [item for item in turn2 if item["type"] == "reasoning"]
    # turn 1 thought twice (before its call, before its answer): both go back in turn 2, encrypted, in place
    assert len(reasoning) == 2 and all(item["encrypted_content"].startswith("enc_") for item in reasoning)
    kinds = [item["type"] for item in turn2]
    assert kinds == [
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "reasoning",
        "message",
        "message",
    ]
    assert {body["prompt_cache_key"] for body in bodies} == {session_id}
    assert all(body["store"] is False for body in bodies)


async def test_the_first_reply_streams_before_the_runtime_is_imported_and_the_turn_takes_the_call_over(
    srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path, tmp_path: Path
) -> None:
    """The early first call speaks the Responses API too: its text is shown while the runtime's import is held,
    and the runtime's first call takes that same request over (one request, byte for byte its own)."""
    env, release = held_env(agent_env, tmp_path, CODER_AGENT_MODEL="openai/gpt-5-mini")
    srv.enqueue(Reply.text("Early ", "bird"), Reply.text("Again."))
    async with raw_agent(env, cwd=workspace) as raw:
        session_id = await start(raw, workspace, "hi")
        early = await held_messages(raw, 2)  # both chunks, while the runtime's import is held
        release.touch()
        rest: list[dict[str, Any]] = []
        done = await reply_to(raw, 2, rest)
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "and?"}]}
        await raw.send_json({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt})
        await reply_to(raw, 3, rest)
    assert [c["content"]["text"] for c in chunks(early)] == ["Early ", "bird"]
    assert [c["content"]["text"] for c in chunks(rest)] == ["Again."]  # the early text not shown twice
    assert done["result"]["stopReason"] == "end_turn"
    assert [request.path for request in srv.requests] == ["/v1/responses"] * 2  # the early request, taken over
    first, second = (request.body for request in srv.requests)
    assert str(workspace) in first["instructions"]
    assert first["input"] == [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}]
    assert first["prompt_cache_key"] == second["prompt_cache_key"] == session_id
    assert second["input"][1] == {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Early bird"}],
    }
    assert "was not taken over" not in (tmp_path / "home" / "logs" / "coder-agent.log").read_text(encoding="utf-8")


async def test_a_reply_that_thinks_first_streams_its_thought_and_text_and_ends_its_turn_before_the_runtime(
    srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path, tmp_path: Path
) -> None:
    """The early stage reads the Responses stream as `ResponsesReader` does: the reasoning summary as thoughts,
    the text, and the response's end ends the turn; the runtime then keeps the turn from the same bytes, its
    reasoning item included, which goes back with the next request."""
    env, release = held_env(agent_env, tmp_path, CODER_AGENT_MODEL="openai/gpt-5-mini")
    srv.enqueue(thinking("Short answer.", TextStep(pieces=["Early ", "bird"])), Reply.text("Again."))
    async with raw_agent(env, cwd=workspace) as raw:
        session_id = await start(raw, workspace, "hi")
        early = await held_messages(raw, 4)  # the thought, two pieces of text, the end: the runtime is held
        release.touch()
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "and?"}]}
        await raw.send_json({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt})
        rest: list[dict[str, Any]] = []
        done = await reply_to(raw, 3, rest)
    shown = [(m["params"]["update"]["sessionUpdate"], m["params"]["update"]["content"]["text"]) for m in early[:3]]
    assert shown == [
        ("agent_thought_chunk", "Short answer."),
        ("agent_message_chunk", "Early "),
        ("agent_message_chunk", "bird"),
    ]
    assert early[3] == {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}}
    assert [m for m in rest if m.get("id") == 2] == []  # the runtime's own answer was not sent again
    assert [c["content"]["text"] for c in chunks(rest)] == ["Again."]
    assert done["result"]["stopReason"] == "end_turn"
    assert [request.path for request in srv.requests] == ["/v1/responses"] * 2  # the early request, taken over
    kinds = [item["type"] for item in srv.requests[1].body["input"]]
    assert kinds == ["message", "reasoning", "message", "message"]  # the first reply's reasoning, sent back
    assert "was not taken over" not in (tmp_path / "home" / "logs" / "coder-agent.log").read_text(encoding="utf-8")
