"""The first prompt's first model call, streamed before the runtime is imported, and the turn the full agent
then finishes with it (`prestart.early_prompt`, `prestart.early_call`, `server.early_reply`).

As in test_early_session.py, the agent's import of the runtime is held until the test creates a file: the
chunks that arrive meanwhile were streamed by the early stage. Every message is checked against the schema.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from coder_agent.kit.commands import init_text
from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.acp_client import raw_agent
from tests.support.agent_env import FIRST_PROMPT_TIMEOUT, REPO_ROOT, EnvFactory, initialize, request
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
async def test_the_first_reply_streams_and_its_turn_ends_before_the_runtime_which_then_keeps_it(
    wire: str, srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path, tmp_path: Path
) -> None:
    if wire == "anthropic":
        agent_env = _anthropic(agent_env, srv)
    env, release = held_env(agent_env, tmp_path)
    srv.enqueue(Reply.text("Early ", "bird"), Reply.text("Again."))
    async with raw_agent(env, cwd=workspace) as raw:
        session_id = await start(raw, workspace, "hi")
        early = await held_messages(raw, 3)  # both chunks and the end of the turn, while the runtime is held
        release.touch()
        follow = {"sessionId": session_id, "prompt": [{"type": "text", "text": "and?"}]}
        await raw.send_json(request(3, "session/prompt", follow))  # at once, as an editor would
        rest: list[dict[str, Any]] = []
        done = await reply_to(raw, 3, rest)
    assert [c["content"]["text"] for c in chunks(early)] == ["Early ", "bird"]
    assert {m["params"]["sessionId"] for m in early[:2]} == {session_id}
    assert early[2] == {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}}
    assert [m for m in rest if m.get("id") == 2] == []  # the runtime's own answer was not sent again
    assert [c["content"]["text"] for c in chunks(rest)] == ["Again."]  # nor the first reply's text
    assert done["result"]["stopReason"] == "end_turn"
    assert len(srv.requests) == 2  # the early request, taken over, then the second prompt's
    body, second = srv.requests[0].body, srv.requests[1].body
    if wire == "anthropic":
        assert str(workspace) in body["system"][0]["text"]
        assert [tool["name"] for tool in body["tools"]][:2] == ["read_file", "write_file"]
        assert second["messages"][1]["role"] == "assistant" and "Early bird" in json.dumps(second["messages"][1])
        assert second["system"] == body["system"]  # the same system prompt: the one the early call was sent with
    else:
        assert body["messages"][0]["role"] == "system" and str(workspace) in body["messages"][0]["content"]
        assert body["messages"][1] == {"role": "user", "content": "hi"}
        assert second["messages"][2] == {"role": "assistant", "content": "Early bird"}
        assert second["messages"][0] == body["messages"][0]
    assert "was not taken over" not in _log(tmp_path)

    # The conversation holds the reply: a load replays it, as one message.
    async with raw_agent(agent_env(), cwd=workspace) as raw:
        seen: list[dict[str, Any]] = []
        await raw.send_json(initialize(0))
        await reply_to(raw, 0, seen)
        load = {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []}
        await raw.send_json(request(1, "session/load", load))
        await reply_to(raw, 1, seen)
    replayed = chunks(seen)
    assert [c["content"]["text"] for c in replayed] == ["Early ", "bird", "Again."]
    assert len({c["messageId"] for c in replayed[:2]}) == 1


async def test_a_session_that_thinks_from_the_start_streams_its_thoughts_early_and_the_turn_keeps_them(
    srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path, tmp_path: Path
) -> None:
    agent_env = _anthropic(agent_env, srv)
    env, release = held_env(agent_env, tmp_path, CODER_AGENT_THOUGHT_LEVEL="high")
    srv.enqueue(Reply.thinking_then_text(["Let me ", "think."], ["Early ", "bird"]))
    async with raw_agent(env, cwd=workspace) as raw:
        await start(raw, workspace, "hi")
        early = await held_messages(raw, 5)  # two thoughts, two pieces of text, the end: the runtime is held
        release.touch()
        done = early.pop()
    kinds = [update_of(m)["sessionUpdate"] for m in early]
    assert kinds == ["agent_thought_chunk", "agent_thought_chunk", "agent_message_chunk", "agent_message_chunk"]
    assert [update_of(m)["content"]["text"] for m in early] == ["Let me ", "think.", "Early ", "bird"]
    assert done["result"]["stopReason"] == "end_turn"
    assert len(srv.requests) == 1  # the early request: it asked for thinking
    assert srv.requests[0].body["thinking"] == {"type": "enabled", "budget_tokens": 4096}


@pytest.mark.parametrize("command", ["/init keep it short", "/hello world"])
async def test_a_first_prompt_that_is_a_command_is_expanded_and_streams_before_the_runtime(
    command: str, srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path, tmp_path: Path
) -> None:
    (workspace / ".coder-agent" / "commands").mkdir(parents=True)
    (workspace / ".coder-agent" / "commands" / "hello.md").write_text("Say hello to $ARGUMENTS.\n", encoding="utf-8")
    env, release = held_env(agent_env, tmp_path)
    srv.enqueue(Reply.text("On ", "it"), Reply.text("Next."))
    async with raw_agent(env, cwd=workspace) as raw:
        session_id = await start(raw, workspace, command)
        early = await held_messages(raw, 3)  # the reply and the end of the turn, while the runtime is held
        release.touch()
        follow = {"sessionId": session_id, "prompt": [{"type": "text", "text": "and?"}]}
        await raw.send_json(request(3, "session/prompt", follow))
        await reply_to(raw, 3, [])
    assert [c["content"]["text"] for c in chunks(early)] == ["On ", "it"]
    assert early[2]["result"] == {"stopReason": "end_turn"}
    sent = srv.requests[0].body["messages"][1]["content"]
    assert sent == ("Say hello to world." if command.startswith("/hello") else init_text("keep it short"))
    assert srv.requests[1].body["messages"][1]["content"] == sent  # the turn kept what the model was sent
    assert "was not taken over" not in _log(tmp_path)


async def test_a_first_prompt_that_is_a_command_only_the_agent_runs_is_left_to_it(
    srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path, tmp_path: Path
) -> None:
    env, release = held_env(agent_env, tmp_path)
    async with raw_agent(env, cwd=workspace) as raw:
        await start(raw, workspace, "/undo")
        with pytest.raises(TimeoutError):  # nothing comes while the runtime is held
            with anyio.fail_after(0.5):
                await raw.read_message(FIRST_PROMPT_TIMEOUT)
        release.touch()
        seen: list[dict[str, Any]] = []
        done = await reply_to(raw, 2, seen)
    assert done["result"]["stopReason"] == "end_turn"
    assert srv.requests == []  # `/undo` is the agent's own: no model call


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
    text = "/review hi" if case == "slash command" else "hi"  # a command the agent expands itself (git)
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


# In the agent's process: has the early request gone out when the runtime's import begins (its first module)?
ORDER = """
import os, socket

_sent = []
_send = socket.socket.send

def send(self, data, *args):
    if bytes(data[:5]) == b"POST ":
        _sent.append(True)
    return _send(self, data, *args)

socket.socket.send = send

class _Mark:
    def find_spec(self, name, path=None, target=None):
        if name == "coder_agent.store.sqlite":
            import sys
            sys.meta_path.remove(self)
            heavy = sorted({"dataclasses", "inspect", "ast"} & set(sys.modules))  # ~10 ms of the early path
            with open(os.environ["IMPORT_ORDER"], "w") as out:
                out.write(("sent first" if _sent else "import first") + "".join(f", {name}" for name in heavy))
        return None

if os.environ.get("IMPORT_ORDER"):
    import sys
    sys.meta_path.insert(0, _Mark())
"""


async def test_the_runtimes_import_waits_until_the_first_prompts_request_is_sent(
    srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path, tmp_path: Path
) -> None:
    """The request is made with the interpreter to itself: the import, sharing it through the GIL, once made the
    first chunk take twice as long. When no prompt comes at once, the import does not wait for one. And the early
    path imports none of the standard library's heavy modules (`dataclasses` and what it brings)."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(ORDER, encoding="utf-8")
    env = agent_env(PYTHONPATH=f"{site}:{REPO_ROOT}", IMPORT_ORDER=str(tmp_path / "order"))
    srv.enqueue(Reply.text("Early ", "bird"), Reply.text("Later."))
    async with raw_agent(env, cwd=workspace) as raw:
        session_id = await start(raw, workspace, "hi")
        seen: list[dict[str, Any]] = []
        assert (await reply_to(raw, 2, seen))["result"]["stopReason"] == "end_turn"
    assert (tmp_path / "order").read_text() == "sent first"
    assert session_id

    (tmp_path / "order").unlink()
    async with raw_agent(env, cwd=workspace) as raw:  # no prompt: the runtime comes in while the editor waits
        await raw.send_json(initialize(0))
        await reply_to(raw, 0, seen)
        await raw.send_json(request(1, "session/new", {"cwd": str(workspace), "mcpServers": []}))
        await reply_to(raw, 1, seen)
        await raw.send_json(request(2, "session/list", {}))
        assert "sessions" in (await reply_to(raw, 2, seen))["result"]
    assert (tmp_path / "order").read_text() == "import first"
