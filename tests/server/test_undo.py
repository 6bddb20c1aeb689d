"""Undo: the files a turn changed are put back (through the editor when it serves files), even after the agent
died and came back; the model hears what was undone."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import PROTOCOL_VERSION, text_block

from coder_agent.cli.sessions import main as sessions_main
from coder_agent.config.settings import Settings
from coder_agent.scripted.script import Reply, ToolCallStep
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.inproc import inproc_agent

pytestmark = pytest.mark.anyio


def sh(cwd: Path, script: str) -> None:
    subprocess.run(["/bin/sh", "-c", script], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def project(workspace: Path) -> Path:
    sh(workspace, "printf 'one\\n' > a.txt && printf 'keep\\n' > b.txt")
    sh(workspace, "git init -q && git add -A && git -c user.email=t@t -c user.name=t commit -qm init")
    return workspace


def turn_that_changes(project: Path) -> Reply:
    write = ToolCallStep(name="write_file", id="w1", arguments=json.dumps({"path": "a.txt", "content": "two\n"}))
    command = ToolCallStep(name="run_command", id="r1", arguments=json.dumps({"command": "rm b.txt; echo n > c.txt"}))
    return Reply.tool_calls([write, command])


async def test_sessions_undo_after_the_agent_is_gone_puts_the_files_back_and_the_model_hears_it(
    make_settings: Any, srv: ScriptedModelServer, project: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    settings: Settings = make_settings(default_mode="bypass")
    srv.enqueue(turn_that_changes(project), Reply.text("done"))
    async with inproc_agent(settings) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        session_id = (await agent.conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        await agent.conn.prompt(session_id=session_id, prompt=[text_block("change things")])
    assert (project / "a.txt").read_text() == "two\n" and not (project / "b.txt").exists()

    monkeypatch.setenv("CODER_AGENT_HOME", str(settings.home))
    assert await anyio.to_thread.run_sync(sessions_main, ["undo", session_id]) == 0
    out = capsys.readouterr().out
    assert "restored  " + str(project / "a.txt") in out and "deleted   " + str(project / "c.txt") in out
    assert (project / "a.txt").read_text() == "one\n" and (project / "b.txt").read_text() == "keep\n"
    assert not (project / "c.txt").exists()

    srv.enqueue(Reply.text("ok"))
    async with inproc_agent(settings) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        await agent.conn.load_session(session_id=session_id, cwd=str(project), mcp_servers=[])
        await agent.conn.prompt(session_id=session_id, prompt=[text_block("what now?")])
    last_user = [m for m in srv.requests[-1].body["messages"] if m["role"] == "user"][-1]
    assert "The user undid the file changes" in json.dumps(last_user)
    assert await anyio.to_thread.run_sync(sessions_main, ["undo", session_id]) == 0
    assert "Nothing to undo." in capsys.readouterr().out


async def test_undo_leaves_a_file_someone_changed_since_and_says_so(
    make_settings: Any, srv: ScriptedModelServer, project: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    settings: Settings = make_settings(default_mode="bypass")
    srv.enqueue(turn_that_changes(project), Reply.text("done"))
    async with inproc_agent(settings) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        session_id = (await agent.conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        await agent.conn.prompt(session_id=session_id, prompt=[text_block("change things")])
    (project / "a.txt").write_text("the user's own edit\n")
    monkeypatch.setenv("CODER_AGENT_HOME", str(settings.home))
    assert await anyio.to_thread.run_sync(sessions_main, ["undo", session_id]) == 1
    assert f"left      {project / 'a.txt'} (changed since; --force to overwrite)" in capsys.readouterr().out
    assert (project / "a.txt").read_text() == "the user's own edit\n" and (project / "b.txt").exists()
    assert await anyio.to_thread.run_sync(sessions_main, ["undo", session_id, "--force"]) == 0
    assert (project / "a.txt").read_text() == "one\n"
    assert (project / "b.txt").read_text() == "keep\n" and not (project / "c.txt").exists()


async def prompt(agent: Any, session_id: str, text: str) -> str:
    return str((await agent.conn.prompt(session_id=session_id, prompt=[text_block(text)])).stop_reason)


def agent_texts(agent: Any, session_id: str) -> list[str]:
    from acp.schema import AgentMessageChunk

    return [u.content.text for u in agent.client.updates(session_id) if isinstance(u, AgentMessageChunk)]


async def test_slash_undo_in_the_editor_puts_the_files_back_and_the_model_hears_it_next(
    make_settings: Any, srv: ScriptedModelServer, project: Path
) -> None:
    srv.enqueue(turn_that_changes(project), Reply.text("done"), Reply.text("noted"))
    async with inproc_agent(make_settings(default_mode="bypass")) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        session_id = (await agent.conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        await prompt(agent, session_id, "change things")
        requests = len(srv.requests)
        assert await prompt(agent, session_id, "/undo") == "end_turn"
        assert len(srv.requests) == requests  # the command asked the model nothing
        # Markdown: a headline and a list, the paths relative to the session's folder.
        assert agent_texts(agent, session_id)[-1] == (
            "**Undid the last turn's file changes**\n- restored `a.txt`\n- restored `b.txt`\n"
            "- deleted `c.txt` (the turn created it)"
        )
        assert (project / "a.txt").read_text() == "one\n" and (project / "b.txt").exists()
        await prompt(agent, session_id, "and now?")
    last_user = [m for m in srv.requests[-1].body["messages"] if m["role"] == "user"][-1]
    assert "The user undid the file changes" in json.dumps(last_user)
    assert "/undo" not in json.dumps(srv.requests[-1].body["messages"])


async def test_slash_rewind_goes_back_files_and_conversation_and_a_load_sees_the_same(
    make_settings: Any, srv: ScriptedModelServer, project: Path
) -> None:
    second = ToolCallStep(name="write_file", id="w2", arguments=json.dumps({"path": "a.txt", "content": "three\n"}))
    srv.enqueue(
        Reply.text("first answer"),
        turn_that_changes(project),
        Reply.text("done"),
        Reply.tool_calls([second]),
        Reply.text("done again"),
        Reply.text("after the rewind"),
    )
    settings: Settings = make_settings(default_mode="bypass")
    async with inproc_agent(settings) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        session_id = (await agent.conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        for text in ("just talk", "change things", "change again"):
            await prompt(agent, session_id, text)
        assert (project / "a.txt").read_text() == "three\n"
        # A slip is answered in the conversation, as `/rewind abc` is, not refused as a protocol error.
        assert await prompt(agent, session_id, "/rewind 4") == "end_turn"
        assert agent_texts(agent, session_id)[-1] == "3 turns can be rewound, not 4"
        assert (project / "a.txt").read_text() == "three\n"
        assert await prompt(agent, session_id, "/rewind 2") == "end_turn"
        assert agent_texts(agent, session_id)[-1].startswith(
            "**Went back 2 turns; the model no longer sees them. Files:**\n- restored `a.txt`"
        )
        assert (project / "a.txt").read_text() == "one\n" and (project / "b.txt").exists()
        assert not (project / "c.txt").exists()
        await prompt(agent, session_id, "what do you remember?")
    spoken = [m.get("content") for m in srv.requests[-1].body["messages"] if m["role"] in ("user", "assistant")]
    assert "just talk" in json.dumps(spoken) and "first answer" in json.dumps(spoken)
    assert "change things" not in json.dumps(spoken) and "change again" not in json.dumps(spoken)
    async with inproc_agent(settings) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        await agent.conn.load_session(session_id=session_id, cwd=str(project), mcp_servers=[])
        replayed = json.dumps([m for m in agent.messages if m.get("method") == "session/update"])
    assert "just talk" in replayed and "what do you remember?" in replayed
    assert "change things" not in replayed and "change again" not in replayed
