"""The first prompt's first model call, streamed before the runtime is imported, and the turn the full agent
then finishes with it (`server.early_prompt`, `llm.early_call`).

As in test_early_session.py, the agent's import of the runtime is held until the test creates a file: the
chunks that arrive meanwhile were streamed by the early stage. Every message is checked against the schema.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.acp_client import raw_agent
from tests.support.agent_env import FIRST_PROMPT_TIMEOUT, EnvFactory, initialize, request
from tests.support.early_stage import (
    announced_commands,
    chunks,
    held_env,
    held_messages,
    reply_to,
    start,
    update_of,
)

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


def _anthropic(agent_env: EnvFactory, srv: ScriptedModelServer) -> EnvFactory:
    def make(**overrides: str | None) -> dict[str, str]:
        model = {"CODER_AGENT_MODEL": "anthropic/claude-sonnet-4-5", "CODER_AGENT_API_BASE": srv.anthropic_url}
        return agent_env(**{**model, **overrides})

    return make


def _log(tmp_path: Path) -> str:
    return (tmp_path / "home" / "logs" / "coder-agent.log").read_text(encoding="utf-8")


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_the_first_reply_streams_before_the_runtime_and_the_turn_ends_as_ever(
    wire: str, srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path, tmp_path: Path
) -> None:
    if wire == "anthropic":
        agent_env = _anthropic(agent_env, srv)
    env, release = held_env(agent_env, tmp_path)
    srv.enqueue(Reply.text("Early ", "bird"))
    async with raw_agent(env, cwd=workspace) as raw:
        session_id = await start(raw, workspace, "hi")
        early = await held_messages(raw, 2)  # both chunks, while the runtime's import is held
        release.touch()
        rest: list[dict[str, Any]] = []
        done = await reply_to(raw, 2, rest)
    assert [c["content"]["text"] for c in chunks(early)] == ["Early ", "bird"]
    assert {m["params"]["sessionId"] for m in early} == {session_id}
    assert chunks(rest) == []  # the full agent did not send them again
    assert done["result"]["stopReason"] == "end_turn"
    assert len(srv.requests) == 1  # one model request: the early one, taken over
    body = srv.requests[0].body
    if wire == "anthropic":
        assert str(workspace) in body["system"][0]["text"]
        assert body["messages"][0]["role"] == "user"
        assert [tool["name"] for tool in body["tools"]][:2] == ["read_file", "write_file"]
    else:
        assert body["messages"][0]["role"] == "system" and str(workspace) in body["messages"][0]["content"]
        assert body["messages"][1] == {"role": "user", "content": "hi"}
        assert [tool["function"]["name"] for tool in body["tools"]][:2] == ["read_file", "write_file"]
    assert "was not taken over" not in _log(tmp_path)

    # The conversation holds the reply: a load replays it under the messageId it was shown with.
    srv.enqueue(Reply.text("Again."))
    async with raw_agent(agent_env(), cwd=workspace) as raw:
        seen: list[dict[str, Any]] = []
        await raw.send_json(initialize(0))
        await reply_to(raw, 0, seen)
        load = {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []}
        await raw.send_json(request(1, "session/load", load))
        await reply_to(raw, 1, seen)
        await raw.send_json(
            request(2, "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "and?"}]})
        )
        await reply_to(raw, 2, seen)
    replayed = chunks(seen)
    assert [c["content"]["text"] for c in replayed[:2]] == ["Early ", "bird"]
    assert [c["messageId"] for c in replayed[:2]] == [c["messageId"] for c in chunks(early)]
    second = srv.requests[1].body
    if wire == "anthropic":
        assert second["messages"][1]["role"] == "assistant" and "Early bird" in json.dumps(second["messages"][1])
        assert second["system"] == body["system"]  # the same system prompt: the one the early call was sent with
    else:
        assert second["messages"][2] == {"role": "assistant", "content": "Early bird"}
        assert second["messages"][0] == body["messages"][0]


async def test_a_tool_call_in_the_first_reply_is_left_to_the_full_agent(
    srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "notes.txt").write_text("forty-two\n", encoding="utf-8")
    env, release = held_env(agent_env, tmp_path)
    call = tool_call("read_file", {"path": str(workspace / "notes.txt")}, id="call_1")
    srv.enqueue(Reply.tool_calls([call], text=["Let me look."]), Reply.text("It says forty-two."))
    async with raw_agent(env, cwd=workspace) as raw:
        await start(raw, workspace, "what do my notes say?")
        early = await held_messages(raw, 1)
        with pytest.raises(TimeoutError):  # the tool call waits for the full agent
            with anyio.fail_after(0.5):
                await raw.read_message(FIRST_PROMPT_TIMEOUT)
        release.touch()
        rest: list[dict[str, Any]] = []
        done = await reply_to(raw, 2, rest)
    assert [c["content"]["text"] for c in chunks(early)] == ["Let me look."]
    assert [c["content"]["text"] for c in chunks(rest)] == ["It says forty-two."]
    tool_updates = [update_of(m) for m in rest if update_of(m).get("sessionUpdate") == "tool_call_update"]
    assert any(u.get("status") == "completed" for u in tool_updates)
    assert done["result"]["stopReason"] == "end_turn"
    assert len(srv.requests) == 2
    history = srv.requests[1].body["messages"]
    assert history[2]["content"] == "Let me look." and history[2]["tool_calls"][0]["id"] == "call_1"
    assert "forty-two" in history[3]["content"]


async def test_a_cancel_during_the_early_reply_cancels_the_turn_and_keeps_what_was_shown(
    srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path, tmp_path: Path
) -> None:
    env, release = held_env(agent_env, tmp_path)
    srv.enqueue(Reply.stall(30, after_text=["Thinking about it"]), Reply.text("Fine."))
    async with raw_agent(env, cwd=workspace) as raw:
        session_id = await start(raw, workspace, "take your time")
        early = await held_messages(raw, 1)
        await raw.send_json({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session_id}})
        release.touch()
        rest: list[dict[str, Any]] = []
        done = await reply_to(raw, 2, rest)
        follow = {"sessionId": session_id, "prompt": [{"type": "text", "text": "well?"}]}
        await raw.send_json(request(3, "session/prompt", follow))
        await reply_to(raw, 3, rest)
    assert [c["content"]["text"] for c in chunks(early)] == ["Thinking about it"]
    assert done["result"]["stopReason"] == "cancelled"
    history = srv.requests[1].body["messages"]
    assert history[1:] == [
        {"role": "user", "content": "take your time"},
        {"role": "assistant", "content": "Thinking about it"},
        {"role": "user", "content": "well?"},
    ]


@pytest.mark.parametrize("case", ["slash command", "project .mcp.json", "image"])
async def test_what_the_early_stage_is_not_sure_of_waits_for_the_full_agent(
    case: str, srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path, tmp_path: Path
) -> None:
    env, release = held_env(agent_env, tmp_path)
    srv.enqueue(Reply.text("Later."))
    text = "/nonsense hi" if case == "slash command" else "hi"
    if case == "project .mcp.json":
        (workspace / ".mcp.json").write_text('{"mcpServers": {}}', encoding="utf-8")
    async with raw_agent(env, cwd=workspace) as raw:
        if case == "image":
            seen: list[dict[str, Any]] = []
            await raw.send_json(initialize(0))
            await reply_to(raw, 0, seen)
            await raw.send_json(request(1, "session/new", {"cwd": str(workspace), "mcpServers": []}))
            session_id = (await reply_to(raw, 1, seen))["result"]["sessionId"]
            await announced_commands(raw)
            image = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
            prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}, image]}
            await raw.send_json(request(2, "session/prompt", prompt))
        else:
            await start(raw, workspace, text)
        with pytest.raises(TimeoutError):
            with anyio.fail_after(1):  # held: no early chunk
                await raw.read_message(FIRST_PROMPT_TIMEOUT)
        assert srv.requests == []
        release.touch()
        rest: list[dict[str, Any]] = []
        await reply_to(raw, 2, rest)
