"""Slash commands: announced after the reply that opens a session, built-in, the user's and the project's
Markdown files (data, never settings), and an unknown `/word` left to the model as text."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, text_block
from acp.schema import UserMessageChunk

from coder_agent.config.settings import Settings
from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.inproc import InprocAgent, InprocRaw, inproc_agent, inproc_raw
from tests.support.recording_client import RecordingClient
from tests.support.server_helpers import commands_of

pytestmark = pytest.mark.anyio


def last_user_text(srv: ScriptedModelServer) -> str:
    message = srv.requests[-1].body["messages"][-1]
    assert message["role"] == "user"
    return str(message["content"])


async def start(agent: InprocAgent, workspace: Path) -> str:
    await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
    return (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id


async def reply_then_commands(raw: InprocRaw, request_id: str, method: str, params: dict[str, Any]) -> None:
    """Send a request; the commands must come after its reply, never before it."""
    await raw.send_json({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
    while True:
        message = await raw.read_message()
        update = message.get("params", {}).get("update", {})
        assert update.get("sessionUpdate") != "available_commands_update", f"commands before the {method} reply"
        if message.get("id") == request_id:
            assert "result" in message, message
            break
    while True:
        message = await raw.read_message()
        if message.get("params", {}).get("update", {}).get("sessionUpdate") == "available_commands_update":
            names = [c["name"] for c in message["params"]["update"]["availableCommands"]]
            assert names[:3] == ["compact", "init", "review"]
            return


async def test_the_commands_come_after_the_reply_to_new_resume_and_fork_never_before(
    settings: Settings, workspace: Path
) -> None:
    """The client learns a new session's id from the reply (new, fork), and expects no replay before a resume's:
    a JetBrains client hangs on an update before it."""
    async with inproc_raw(settings) as raw:
        await raw.send_json({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
        await raw.read_reply(0)
        await reply_then_commands(raw, "new", "session/new", {"cwd": str(workspace), "mcpServers": []})
        session_id = next(m["result"]["sessionId"] for m in raw.messages if m.get("id") == "new")
        same = {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []}
        await reply_then_commands(raw, "resume", "session/resume", same)
        await reply_then_commands(raw, "fork", "session/fork", same)
        raw.io.forgive_unstable_fork_result()


def _after_the_reply_to(wire: list[tuple[str, dict[str, Any]]], method: str) -> tuple[list[str], list[str]]:
    """The kinds of update the agent sent before the reply to the (only) `method` request, and those it sent
    after that reply and before its answer to the client's next request."""
    asked = next(i for i, (side, m) in enumerate(wire) if side == "client" and m.get("method") == method)
    request_id = wire[asked][1]["id"]
    replied = next(
        i for i, (side, m) in enumerate(wire) if side == "agent" and m.get("id") == request_id and "method" not in m
    )
    following = next(i for i, (side, m) in enumerate(wire) if i > replied and side == "client" and "id" in m)
    answered = next(
        i for i, (side, m) in enumerate(wire) if side == "agent" and m.get("id") == wire[following][1]["id"]
    )

    def kinds(messages: list[tuple[str, dict[str, Any]]]) -> list[str]:
        return [m["params"]["update"]["sessionUpdate"] for side, m in messages if m.get("method") == "session/update"]

    return kinds(wire[asked:replied]), kinds(wire[replied:answered])


@pytest.mark.parametrize("stdio", [False, True], ids=["memory", "stdio"])
async def test_a_load_sends_everything_it_announces_before_its_reply_and_nothing_after_it(
    stdio: bool, settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    """ACP-LOAD-002 (the official TCK): the replay, the mode, the options and the commands all come before the
    `session/load` reply, and no update for the session follows it before the client's next request. The client
    knows the session's id already, and handles updates before this reply (the replay) anyway."""
    srv.enqueue(Reply.text("Hello ", "there"))
    async with inproc_agent(settings) as agent:
        session_id = await start(agent, workspace)
        await agent.conn.prompt(session_id=session_id, prompt=[text_block("hi")])
    async with inproc_agent(settings, stdio=stdio) as agent:  # a new process, as the TCK's
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        await agent.conn.load_session(session_id=session_id, cwd=str(workspace), mcp_servers=[])
        listed = await agent.conn.list_sessions()
        before, after = _after_the_reply_to(agent.io.wire, "session/load")
    assert [info.session_id for info in listed.sessions] == [session_id]
    assert before[:3] == ["user_message_chunk", "agent_message_chunk", "agent_message_chunk"]  # the replay
    assert {"current_mode_update", "config_option_update", "available_commands_update"} <= set(before[3:])
    assert after == []


async def test_the_built_in_commands_say_what_they_take(settings: Settings, workspace: Path) -> None:
    async with inproc_agent(settings) as agent:
        commands = await commands_of(agent, await start(agent, workspace))
    assert commands["compact"].input.root.hint == "what to keep in focus (optional)"
    assert commands["review"].input.root.hint == "what to look at (optional)"
    assert commands["init"].input is None


async def test_user_and_project_commands_expand_their_arguments_and_the_record_keeps_what_was_typed(
    make_settings: Any, srv: ScriptedModelServer, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    own = tmp_path / "config" / "coder-agent" / "commands"
    own.mkdir(parents=True)
    (own / "explain.md").write_text("---\ndescription: Explain code\nmodel: openai/other\n---\nExplain $ARGUMENTS.\n")
    project = workspace / ".coder-agent" / "commands"
    project.mkdir(parents=True)
    (project / "explain.md").write_text("The project's own explain, which must not win.\n")
    (project / "compact.md").write_text("Nor may a project file replace a built-in.\n")
    front = "---\ndefault_mode: bypass\nallowed-tools: run_command\nargument-hint: <target>\n---\n"
    (project / "deploy.md").write_text(front + "# Deploy\nShip $ARGUMENTS.\n")
    srv.enqueue(Reply.text("explained"), Reply.text("shipped"))
    settings: Settings = make_settings(config_dir=tmp_path / "config" / "coder-agent")
    async with inproc_agent(settings) as agent:
        session_id = await start(agent, workspace)
        commands = await commands_of(agent, session_id)
        await agent.conn.prompt(session_id=session_id, prompt=[text_block("/explain the parser")])
        explained = last_user_text(srv)
        await agent.conn.prompt(session_id=session_id, prompt=[text_block("/deploy staging")])
        shipped = last_user_text(srv)
    assert commands["explain"].description == "Explain code (user)"
    assert commands["deploy"].description == "Deploy (project)" and commands["deploy"].input.root.hint == "<target>"
    assert commands["compact"].description.startswith("Summarise the conversation")
    assert explained == "Explain the parser."
    assert shipped == "# Deploy\nShip staging."
    assert [r.body["model"] for r in srv.requests] == ["scripted", "scripted"]  # front matter changed nothing
    async with inproc_agent(settings) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        await agent.conn.load_session(session_id=session_id, cwd=str(workspace), mcp_servers=[])
        typed = [u.content.text for u in agent.client.updates(session_id) if isinstance(u, UserMessageChunk)]
    assert typed == ["/explain the parser", "/deploy staging"]


async def test_a_project_command_cannot_loosen_the_mode(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    project = workspace / ".coder-agent" / "commands"
    project.mkdir(parents=True)
    (project / "go.md").write_text("---\nmode: bypass\npermissions: allow-all\n---\nWrite the file.\n")
    target = workspace / "out.txt"
    srv.enqueue(Reply.tool_calls([tool_call("write_file", {"path": str(target), "content": "x"})]), Reply.text("ok"))
    client = RecordingClient(permission="reject_once")
    async with inproc_agent(settings, client) as agent:
        session_id = await start(agent, workspace)
        await agent.conn.prompt(session_id=session_id, prompt=[text_block("/go")])
    assert len(client.permission_requests) == 1  # the write still asked
    assert not target.exists()


async def test_an_unknown_slash_word_goes_to_the_model_as_text(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    srv.enqueue(Reply.text("yes"), Reply.text("ok"))
    async with inproc_agent(settings) as agent:
        session_id = await start(agent, workspace)
        await agent.conn.prompt(session_id=session_id, prompt=[text_block("/etc holds the config, right?")])
        first = last_user_text(srv)
        await agent.conn.prompt(session_id=session_id, prompt=[text_block("/nonsense")])
    assert first == "/etc holds the config, right?"
    assert last_user_text(srv) == "/nonsense"


async def test_review_gives_the_model_the_uncommitted_changes(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=workspace, check=True)

    git("init", "-q")
    (workspace / "app.py").write_text("def add(a, b):\n    return a + b\n")
    git("add", "app.py")
    git("commit", "-qm", "first")
    (workspace / "app.py").write_text("def add(a, b):\n    return a - b\n")
    (workspace / "new.py").write_text("print('new')\n")
    srv.enqueue(Reply.text("a - b is wrong"))
    async with inproc_agent(settings) as agent:
        session_id = await start(agent, workspace)
        await agent.conn.prompt(session_id=session_id, prompt=[text_block("/review the arithmetic")])
    request = last_user_text(srv)
    assert request.startswith("Review the uncommitted changes")
    assert "-    return a + b\n+    return a - b" in request
    assert "?? new.py" in request
    assert "The user adds: the arithmetic" in request


async def test_init_writes_agents_md_through_the_edit_path_and_its_permission(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    agents = workspace / "AGENTS.md"
    srv.enqueue(
        Reply.tool_calls([tool_call("write_file", {"path": str(agents), "content": "# Working here\n"})]),
        Reply.text("Wrote AGENTS.md"),
    )
    client = RecordingClient(permission="allow_once")
    async with inproc_agent(settings, client) as agent:
        session_id = await start(agent, workspace)
        await agent.conn.prompt(session_id=session_id, prompt=[text_block("/init")])
    assert srv.requests[0].body["messages"][-1]["content"].startswith("Write the project's AGENTS.md")
    [asked] = client.permission_requests
    assert asked.tool_call.title is not None and "AGENTS.md" in asked.tool_call.title
    assert agents.read_text() == "# Working here\n"
