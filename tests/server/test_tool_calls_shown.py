"""What the editor is asked and shown for a call: a create reads nothing first, output reads as a terminal shows it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import PROTOCOL_VERSION, text_block
from acp.schema import ReadTextFileResponse, ToolCallProgress, ToolCallStart

from coder_agent.config.settings import Settings
from coder_agent.scripted.script import Reply, ToolCallStep
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.editor_client import EDITOR_CAPABILITIES, EditorClient
from tests.support.inproc import inproc_agent
from tests.support.recording_client import RecordingClient

pytestmark = pytest.mark.anyio


class EmptyForMissing(EditorClient):
    """Some editors answer a read of a file that does not exist with empty content instead of an error."""

    async def read_text_file(self, session_id: str, path: str, *args: Any, **kwargs: Any) -> Any:
        if not await anyio.Path(path).exists() and path not in self.buffers:
            self.calls.append(("fs/read_text_file", {"path": path}))
            return ReadTextFileResponse(content="")
        return await super().read_text_file(session_id, path, *args, **kwargs)


@pytest.mark.parametrize("editor", [EditorClient, EmptyForMissing])
async def test_creating_a_file_reads_nothing_through_the_editor_and_shows_a_new_file(
    settings: Settings, srv: ScriptedModelServer, workspace: Path, editor: type[EditorClient]
) -> None:
    target = workspace / "new.txt"
    call = ToolCallStep(name="write_file", id="c1", arguments=json.dumps({"path": str(target), "content": "hi\n"}))
    srv.enqueue(Reply.tool_calls([call]), Reply.text("created"))
    async with anyio.create_task_group() as tg:
        client = editor(tg)
        async with inproc_agent(settings, client) as agent:
            await agent.conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=EDITOR_CAPABILITIES)
            session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
            await agent.conn.prompt(session_id=session.session_id, prompt=[text_block("create it")])
            updates = client.updates(session.session_id)
        tg.cancel_scope.cancel()
    assert target.read_text() == "hi\n"
    reads = [args for method, args in client.calls if method == "fs/read_text_file"]
    assert reads == []
    start = next(u for u in updates if isinstance(u, ToolCallStart))
    diff = next(block for block in start.content or [] if block.type == "diff")
    assert diff.old_text is None and diff.new_text == "hi\n"
    answer = next(m for m in srv.requests[-1].body["messages"] if m["role"] == "tool")
    assert "created" in answer["content"]


def shown_text(updates: list[Any]) -> str:
    return "\n".join(
        block.content.text
        for u in updates
        if isinstance(u, ToolCallProgress) and u.status == "completed"
        for block in u.content or []
        if block.type == "content"
    )


@pytest.mark.parametrize("profile", ["bare", "editor"])
async def test_command_output_has_plain_line_ends_and_progress_rewrites_collapsed(
    settings: Settings, srv: ScriptedModelServer, workspace: Path, profile: str
) -> None:
    command = r"printf 'one\r\ntwo\r\n50%%\r100%%\r\nlast\r'"
    call = ToolCallStep(name="run_command", id="c1", arguments=json.dumps({"command": command}))
    srv.enqueue(Reply.tool_calls([call]), Reply.text("ran"))
    async with anyio.create_task_group() as tg:
        client: RecordingClient = EditorClient(tg) if profile == "editor" else RecordingClient()
        capabilities = EDITOR_CAPABILITIES if profile == "editor" else None
        async with inproc_agent(settings.model_copy(update={"default_mode": "bypass"}), client) as agent:
            await agent.conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities)
            session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
            await agent.conn.prompt(session_id=session.session_id, prompt=[text_block("run it")])
            updates = client.updates(session.session_id)
        tg.cancel_scope.cancel()
    answer = next(m for m in srv.requests[-1].body["messages"] if m["role"] == "tool")["content"]
    assert "\r" not in answer
    assert answer.endswith("one\ntwo\n100%\nlast")
    if profile == "bare":  # an editor terminal shows the output itself
        assert "\r" not in shown_text(updates)
        assert "one\ntwo\n100%\nlast" in shown_text(updates)


async def test_a_call_that_fails_before_it_is_prepared_is_shown_under_its_tools_title_and_kind(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    calls = [
        ToolCallStep(name="write_file", id="c1", arguments=json.dumps({"path": "x.txt"})),  # no content
        ToolCallStep(name="nonsense_tool", id="c2", arguments="{}"),
    ]
    srv.enqueue(Reply.tool_calls(calls), Reply.text("ok"))
    client = RecordingClient()
    async with inproc_agent(settings, client) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
        await agent.conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
        starts = [u for u in client.updates(session.session_id) if isinstance(u, ToolCallStart)]
    assert [(s.title, s.kind, s.status) for s in starts] == [
        ("Write file", "edit", "failed"),
        ("Unknown tool nonsense_tool", "other", "failed"),
    ]
    answers = [m["content"] for m in srv.requests[-1].body["messages"] if m["role"] == "tool"]
    assert answers[0].startswith("Invalid arguments for write_file")
    assert "Available tools:" in answers[1]


async def test_a_rejected_call_shows_the_user_a_short_note_while_the_model_reads_what_to_do(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    call = ToolCallStep(name="run_command", id="c1", arguments=json.dumps({"command": "rm -rf build"}))
    srv.enqueue(Reply.tool_calls([call]), Reply.text("ok"))
    client = RecordingClient(permission="reject_once")
    async with inproc_agent(settings, client) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
        await agent.conn.prompt(session_id=session.session_id, prompt=[text_block("clean")])
        final = [u for u in client.updates(session.session_id) if isinstance(u, ToolCallProgress)][-1]
    assert final.status == "failed"
    shown = [block.content.text for block in final.content or [] if block.type == "content"]
    assert shown == ["Rejected"]
    answer = next(m for m in srv.requests[-1].body["messages"] if m["role"] == "tool")["content"]
    assert answer == "Refused: the user rejected this call. Do not retry it as is; ask the user how to proceed."
