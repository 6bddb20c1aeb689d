"""Every tool call the model made gets an answer in history, whatever happens; a broken client reply fails one call.

Providers reject a conversation in which an assistant tool call has no tool answer, so one unanswered call
kills the session for good. These tests break the turn at the awkward moments and then check what the model
is sent next.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import PROTOCOL_VERSION, RequestError, text_block
from acp.schema import ToolCallProgress, ToolCallStart

from coder_agent.config.settings import Settings
from coder_agent.scripted.records import RecordedRequest
from coder_agent.scripted.script import Reply, ToolCallStep
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.editor_client import EDITOR_CAPABILITIES, EditorClient
from tests.support.inproc import InprocAgent, inproc_agent
from tests.support.recording_client import RecordingClient

pytestmark = pytest.mark.anyio


def unanswered_calls(request: RecordedRequest) -> list[str]:
    """Ids of the assistant tool calls that no tool message answers, in what the model was sent."""
    messages: list[dict[str, Any]] = request.body["messages"]
    answered = {m["tool_call_id"] for m in messages if m["role"] == "tool"}
    return [
        call["id"]
        for m in messages
        if m["role"] == "assistant"
        for call in m.get("tool_calls") or []
        if call["id"] not in answered
    ]


async def start(agent: InprocAgent, workspace: Path, client_capabilities: Any = None) -> str:
    await agent.conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=client_capabilities)
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    return session.session_id


def write_call(path: Path, call_id: str = "call_w") -> ToolCallStep:
    return ToolCallStep(name="write_file", id=call_id, arguments=json.dumps({"path": str(path), "content": "x\n"}))


async def test_a_cancel_between_the_models_tool_calls_and_their_start_still_answers_them(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    srv.enqueue(Reply.tool_calls([write_call(workspace / "a.txt")]), Reply.text("next answer"))
    async with inproc_agent(settings) as agent:
        session_id = await start(agent, workspace)
        held = anyio.Event()

        async def gate(line: bytes) -> None:
            # The editor stops reading just as the model's tool-call reply is accounted for (usage_update):
            # the turn is stuck in a write when the user presses stop.
            if b'"usage_update"' in line and not held.is_set():
                held.set()
                await anyio.sleep_forever()

        agent.io.outbox.gate = gate
        async with anyio.create_task_group() as tg:
            results: list[str] = []

            async def first_prompt() -> None:
                response = await agent.conn.prompt(session_id=session_id, prompt=[text_block("write a.txt")])
                results.append(response.stop_reason)

            tg.start_soon(first_prompt)
            with anyio.fail_after(30):
                await held.wait()
            await agent.conn.cancel(session_id=session_id)
        agent.io.outbox.gate = None
        assert results == ["cancelled"]
        response = await agent.conn.prompt(session_id=session_id, prompt=[text_block("go on")])
        assert response.stop_reason == "end_turn"
    assert not (workspace / "a.txt").exists()  # the call never ran
    assert unanswered_calls(srv.requests[-1]) == []


async def test_a_failure_to_publish_a_finished_call_still_answers_every_call(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    calls = [
        ToolCallStep(name="list_dir", id="call_1", arguments=json.dumps({"path": "."})),
        ToolCallStep(name="list_dir", id="call_2", arguments=json.dumps({"path": "."})),
    ]
    srv.enqueue(Reply.tool_calls(calls), Reply.text("after the failure"))
    async with inproc_agent(settings) as agent:
        session_id = await start(agent, workspace)
        broken = {"done": False}

        async def gate(line: bytes) -> None:
            # From the first settled call on, no tool call update can be sent until the turn is over.
            if b'"status":"completed"' in line:
                broken["done"] = True
            if broken["done"] and b'"tool_call_update"' in line:
                raise RuntimeError("the update could not be sent")

        agent.io.outbox.gate = gate
        with pytest.raises(RequestError):
            await agent.conn.prompt(session_id=session_id, prompt=[text_block("list twice")])
        agent.io.outbox.gate = None
        response = await agent.conn.prompt(session_id=session_id, prompt=[text_block("go on")])
        assert response.stop_reason == "end_turn"
    assert broken["done"]
    assert unanswered_calls(srv.requests[-1]) == []


class MalformedEditor(EditorClient):
    """An editor whose answers do not match the schema: one kind of answer at a time is broken."""

    def __init__(self, tg: anyio.abc.TaskGroup, broken: str) -> None:
        super().__init__(tg)
        self.broken = broken

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        if self.broken == "permission":
            return {"outcome": "allow_once"}  # not {"outcome": {"outcome": "selected", "optionId": ...}}
        return await super().request_permission(*args, **kwargs)

    async def read_text_file(self, *args: Any, **kwargs: Any) -> Any:
        if self.broken == "read":
            return {"text": "no content field"}
        return await super().read_text_file(*args, **kwargs)

    async def create_terminal(self, *args: Any, **kwargs: Any) -> Any:
        if self.broken == "terminal":
            return {"id": 7}
        return await super().create_terminal(*args, **kwargs)


@pytest.mark.parametrize(
    ("broken", "call"),
    [
        ("permission", ToolCallStep(name="run_command", id="call_p", arguments=json.dumps({"command": "true"}))),
        ("read", ToolCallStep(name="read_file", id="call_r", arguments=json.dumps({"path": "notes.txt"}))),
        ("terminal", ToolCallStep(name="run_command", id="call_t", arguments=json.dumps({"command": "true"}))),
    ],
)
async def test_a_malformed_editor_reply_fails_that_call_and_the_turn_goes_on(
    settings: Settings, srv: ScriptedModelServer, workspace: Path, broken: str, call: ToolCallStep
) -> None:
    (workspace / "notes.txt").write_text("hello\n")
    srv.enqueue(Reply.tool_calls([call]), Reply.text("done anyway"))
    async with anyio.create_task_group() as tg:
        client = MalformedEditor(tg, broken)
        async with inproc_agent(settings, client) as agent:
            session_id = await start(agent, workspace, EDITOR_CAPABILITIES)
            response = await agent.conn.prompt(session_id=session_id, prompt=[text_block("try")])
            assert response.stop_reason == "end_turn"
            assert "done anyway" in client.agent_text(session_id)
            statuses = [u.status for u in client.updates(session_id) if isinstance(u, ToolCallProgress | ToolCallStart)]
            assert statuses[-1] == "failed"
        tg.cancel_scope.cancel()
    answer = next(m for m in srv.requests[-1].body["messages"] if m["role"] == "tool")
    if broken == "permission":
        assert "Refused" in answer["content"]
    assert "malformed" in answer["content"].lower() or broken == "permission"
    assert unanswered_calls(srv.requests[-1]) == []


class RefusingTerminals(EditorClient):
    """acpx's answer to a terminal it will not open: -32603 with the reason in `data.details`."""

    async def create_terminal(self, *args: Any, **kwargs: Any) -> Any:
        raise RequestError(-32603, "Internal error", {"details": "Permission denied for terminal/create"})


async def test_the_editors_error_detail_reaches_the_model_and_the_user(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    call = ToolCallStep(name="run_command", id="call_t", arguments=json.dumps({"command": "ls"}))
    srv.enqueue(Reply.tool_calls([call]), Reply.text("ok"))
    async with anyio.create_task_group() as tg:
        client = RefusingTerminals(tg)
        async with inproc_agent(settings, client) as agent:
            session_id = await start(agent, workspace, EDITOR_CAPABILITIES)
            await agent.conn.prompt(session_id=session_id, prompt=[text_block("ls")])
            shown = [
                block.content.text
                for u in client.updates(session_id)
                if isinstance(u, ToolCallProgress | ToolCallStart)
                for block in u.content or []
                if getattr(block, "type", "") == "content"
            ]
        tg.cancel_scope.cancel()
    answer = next(m for m in srv.requests[-1].body["messages"] if m["role"] == "tool")
    assert "Permission denied for terminal/create" in answer["content"]
    assert any("Permission denied for terminal/create" in text for text in shown)


async def test_a_client_without_permission_answers_still_gets_every_call_answered(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    """A permission request the client fails (an error reply) refuses that call only."""

    class FailingPermission(RecordingClient):
        async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
            raise RequestError(-32603, "Internal error", {"details": "no UI"})

    srv.enqueue(Reply.tool_calls([write_call(workspace / "b.txt")]), Reply.text("fine"))
    async with inproc_agent(settings, FailingPermission()) as agent:
        session_id = await start(agent, workspace)
        response = await agent.conn.prompt(session_id=session_id, prompt=[text_block("write")])
        assert response.stop_reason == "end_turn"
    answer = next(m for m in srv.requests[-1].body["messages"] if m["role"] == "tool")
    assert "no UI" in answer["content"]
    assert not (workspace / "b.txt").exists()
