"""MCP servers named by the client, through the agent: tools offered, called, permissioned, reported."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from acp import PROTOCOL_VERSION, text_block
from acp.schema import EnvVariable, McpServerStdio

from coder_agent.config.settings import Settings
from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.driving import model_saw, texts, updates
from tests.support.inproc import inproc_agent
from tests.support.recording_client import RecordingClient
from tests.support.server_helpers import Run

pytestmark = pytest.mark.anyio
FIRST_PROMPT_TIMEOUT = 30.0

SERVER = str(Path(__file__).resolve().parents[1] / "support" / "mcp_server_script.py")


def demo(name: str = "demo") -> McpServerStdio:
    return McpServerStdio(
        name=name,
        command=sys.executable,
        args=[SERVER, "stdio", "--tag", "e2e"],
        env=[EnvVariable(name="MCP_E2E_SECRET", value="s3cret")],
    )


def dead(name: str = "ghost") -> McpServerStdio:
    return McpServerStdio(name=name, command="/nonexistent/mcp-server", args=[], env=[])


async def test_mcp_tools_are_offered_namespaced_called_and_reported(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    srv.enqueue(
        Reply.tool_calls(
            [
                tool_call("mcp__demo__add", {"a": 2, "b": 40}),
                tool_call("mcp__demo__get_env", {"name": "MCP_E2E_SECRET"}),
            ]
        ),
        Reply.text("ok"),
    )
    client = RecordingClient()
    async with inproc_agent(settings, client) as agent:
        with anyio.fail_after(20):
            await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
            new = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[demo()])
        run = Run(agent, client, new.session_id)
        assert await run.prompt("add") == "end_turn"
        add, env = run.tool_calls().values()
    offered = {tool["function"]["name"] for tool in srv.requests[0].body["tools"]}
    assert {"mcp__demo__add", "mcp__demo__get_env", "read_file"} <= offered
    assert add["title"] == "demo: Add numbers" and add["statuses"][-1] == "completed"
    assert env["statuses"][-1] == "completed"
    # add is read-only (no prompt); get_env is not, so it asked like any tool with side effects
    assert [r.tool_call.tool_call_id for r in client.permission_requests] == [env["toolCallId"]]
    told = model_saw(srv.requests[1].body)
    assert "42" in told and "s3cret" in told


async def test_a_dead_server_is_reported_and_left_out_while_the_session_works(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    srv.enqueue(Reply.tool_calls([tool_call("mcp__demo__add", {"a": 1, "b": 1})]), Reply.text("fine"))
    client = RecordingClient()
    async with inproc_agent(settings, client) as agent:
        with anyio.fail_after(20):
            await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
            start = anyio.current_time()
            new = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[dead(), demo()])
            new_session_seconds = anyio.current_time() - start
        with anyio.fail_after(FIRST_PROMPT_TIMEOUT):
            response = await agent.conn.prompt(session_id=new.session_id, prompt=[text_block("go")])
        notices = texts(updates(agent, new.session_id, "agent_message_chunk"))
    assert response.stop_reason == "end_turn"
    assert any("ghost" in text and "could not start" in text for text in notices)
    offered = {tool["function"]["name"] for tool in srv.requests[0].body["tools"]}
    assert "mcp__demo__add" in offered and not any(name.startswith("mcp__ghost") for name in offered)
    assert new_session_seconds < 5  # session/new does not wait for servers (measured precisely in bench/)


async def test_a_server_that_dies_mid_call_fails_that_call_and_is_reconnected_next_time(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    srv.enqueue(
        Reply.tool_calls([tool_call("mcp__demo__die", {})]),
        Reply.tool_calls([tool_call("mcp__demo__add", {"a": 3, "b": 4})]),
        Reply.text("ok"),
    )
    client = RecordingClient()
    async with inproc_agent(settings.model_copy(update={"default_mode": "bypass"}), client) as agent:
        with anyio.fail_after(20):
            await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
            new = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[demo()])
        run = Run(agent, client, new.session_id)
        assert await run.prompt("die then add", timeout=90) == "end_turn"
        died, added = run.tool_calls().values()
    assert died["statuses"][-1] == "failed"
    assert added["statuses"][-1] == "completed"
    assert "7" in model_saw(srv.requests[2].body)
