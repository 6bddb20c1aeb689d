"""A real MCP server (mcp SDK) that asks the user during a tool call: its question forwarded to the editor as an
elicitation tied to that tool call, the answer returned to the server, and what came of it kept in the tool call."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import PROTOCOL_VERSION
from acp.schema import McpServerStdio

from coder_agent.config.settings import Settings
from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.driving import BackgroundPrompt, model_saw, session_updates
from tests.support.eliciting_client import ElicitingClient, accept_first, accept_with, decline, never
from tests.support.inproc import inproc_agent
from tests.support.recording_client import RecordingClient
from tests.support.server_helpers import Run, session

pytestmark = pytest.mark.anyio

SERVER = str(Path(__file__).resolve().parents[1] / "support" / "mcp_server_script.py")
DEMO = McpServerStdio(name="demo", command=sys.executable, args=[SERVER, "stdio", "--tag", "elicit"], env=[])


async def called(
    srv: ScriptedModelServer, settings: Settings, workspace: Path, client: RecordingClient, tool: str
) -> tuple[Run, dict[str, Any], str]:
    srv.enqueue(Reply.tool_calls([tool_call(f"mcp__demo__{tool}", {}, id="mcp")]), Reply.text("Done."))
    async with session("bare", settings, workspace, client=client, mcp_servers=[DEMO]) as run:
        assert await run.prompt("go", timeout=60) == "end_turn"
    [call] = run.tool_calls().values()
    return run, call, model_saw(srv.requests[1].body)


def elicitations(run: Run) -> list[dict[str, Any]]:
    return [m["params"] for m in run.agent.messages if m.get("method") == "elicitation/create"]


def shown(call: dict[str, Any]) -> str:
    return "\n".join(item["content"]["text"] for item in call["content"] if item["type"] == "content")


async def test_a_servers_form_reaches_the_editor_tied_to_the_tool_call_and_the_answer_reaches_the_server(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    client = ElicitingClient(accept_with({"name": "Ada", "tea": True}))
    run, call, told = await called(srv, settings, workspace, client, "greet")
    [asked] = elicitations(run)
    assert asked["mode"] == "form" and asked["sessionId"] == run.session_id
    assert asked["toolCallId"] == call["toolCallId"]
    assert asked["message"] == "demo: What is your name?"
    assert set(asked["requestedSchema"]["properties"]) == {"name", "tea"}
    assert asked["requestedSchema"]["required"] == ["name"]
    assert "Hello, Ada (tea)" in told
    assert '`demo` asked: What is your name? — answered name: "Ada", tea: true.' in told
    assert "`demo` asked: What is your name?" in shown(call)


@pytest.mark.parametrize(
    ("client", "note"),
    [
        (ElicitingClient(decline), "— declined."),
        (ElicitingClient(accept_with({"name": 5})), "— declined: the answer did not fit the form: `name`: expected"),
        (RecordingClient(), "— declined: the editor offers no form elicitation to put it to the user."),
        (ElicitingClient(accept_first, modes=("url",)), "— declined: the editor offers no form elicitation"),
    ],
)
async def test_a_question_that_is_declined_or_cannot_be_put_is_declined_to_the_server_and_said_in_the_tool_call(
    client: RecordingClient, note: str, srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    _, call, told = await called(srv, settings, workspace, client, "greet")
    assert "No name: decline" in told
    assert note in told and note in shown(call)
    assert call["statuses"][-1] == "completed"


async def test_a_form_acp_cannot_show_is_declined_without_asking(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    run, _, told = await called(srv, settings, workspace, ElicitingClient(accept_first), "nested_form")
    assert elicitations(run) == []
    assert "Address: decline" in told and "its form is not one ACP can show" in told


async def test_a_servers_url_step_becomes_a_url_elicitation_completed_when_the_server_says_so(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    client = ElicitingClient(accept_first)
    run, call, told = await called(srv, settings, workspace, client, "sign_in")
    [asked] = elicitations(run)
    assert asked["mode"] == "url" and asked["url"] == "https://auth.example.com/login?state=1"
    assert asked["toolCallId"] == call["toolCallId"] and asked["message"] == "demo: Sign in to Example"
    assert asked["elicitationId"] != "login-1"  # ours, unique on this connection
    assert "Signed in" in told and "the user agreed to open auth.example.com" in told
    await client.wait_for(lambda: client.completed == [asked["elicitationId"]])
    completions = [m for m in run.agent.messages if m.get("method") == "elicitation/complete"]
    assert [m["params"] for m in completions] == [{"elicitationId": asked["elicitationId"]}]


async def test_a_declined_url_step_is_never_completed(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    client = ElicitingClient(decline)
    _, _, told = await called(srv, settings, workspace, client, "sign_in")
    assert "Not signed in: decline" in told and client.completed == []


async def test_the_server_is_offered_elicitation_only_in_the_modes_the_editor_offers(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    run, _, told = await called(srv, settings, workspace, ElicitingClient(accept_first, modes=("form",)), "sign_in")
    assert elicitations(run) == [] and "the editor offers no url elicitation" in told


async def test_session_load_replays_what_the_server_asked_and_the_answer(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    run, _, _ = await called(srv, settings, workspace, ElicitingClient(accept_with({"name": "Ada"})), "greet")
    async with inproc_agent(settings) as agent:
        with anyio.fail_after(20):
            await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
            await agent.conn.load_session(session_id=run.session_id, cwd=str(workspace), mcp_servers=[])
    replayed = [
        c["content"]["text"]
        for u in session_updates(agent.messages, run.session_id)
        if u["sessionUpdate"] == "tool_call_update"
        for c in u.get("content") or []
        if c["type"] == "content"
    ]
    assert any('`demo` asked: What is your name? — answered name: "Ada"' in text for text in replayed)


@pytest.mark.parametrize("tool", ["greet", "stubborn_greet"])
async def test_session_cancel_withdraws_a_servers_open_question_from_the_editor(
    tool: str, srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    srv.enqueue(Reply.tool_calls([tool_call(f"mcp__demo__{tool}", {}, id="mcp")]))
    client = ElicitingClient(never)
    async with (
        session("bare", settings, workspace, client=client, mcp_servers=[DEMO]) as run,
        anyio.create_task_group() as tasks,
    ):
        turn = BackgroundPrompt(run.agent, run.session_id, "go")
        tasks.start_soon(turn.run)
        await client.wait_for_elicitation(timeout=60)
        await run.agent.conn.cancel(session_id=run.session_id)
        assert (await turn.result(5)).stop_reason == "cancelled"
        await run.agent.io.wait_for_message(lambda m: m.get("method") == "$/cancel_request")
    [asked] = [m for m in run.agent.messages if m.get("method") == "elicitation/create"]
    withdrawn = [m["params"]["requestId"] for m in run.agent.messages if m.get("method") == "$/cancel_request"]
    assert withdrawn == [asked["id"]]
