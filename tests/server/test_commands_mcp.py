"""An MCP server's prompts become slash commands (`mcp__<server>__<prompt>`) once the server is up."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, text_block
from acp.schema import AvailableCommandsUpdate, McpServerStdio

from coder_agent.config.settings import Settings
from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.inproc import inproc_agent
from tests.support.mcp_servers import SERVERS, new_tag

pytestmark = pytest.mark.anyio


def docs_server(tag: str) -> McpServerStdio:
    return McpServerStdio(name="docs", command=sys.executable, args=[SERVERS, "stdio", "--tag", tag], env=[])


async def test_mcp_prompts_are_announced_when_the_server_is_up_and_expand_through_prompts_get(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    srv.enqueue(Reply.text("it adds"), Reply.text("it adds too"), Reply.text("and again"))
    async with inproc_agent(settings) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        new = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[docs_server(new_tag())])
        session_id = new.session_id

        def announced() -> list[AvailableCommandsUpdate]:
            return [u for u in agent.client.updates(session_id) if isinstance(u, AvailableCommandsUpdate)]

        await agent.client.wait_for(lambda: len(announced()) >= 2, timeout=30)
        commands = {command.name: command for command in announced()[-1].available_commands}
        slip = await agent.conn.prompt(session_id=session_id, prompt=[text_block("/mcp__docs__explain")])
        told = agent.client.agent_text(session_id)
        expanded = []
        for typed in ("app.py long", "app.py depth=long", "depth=long app.py", 'path="my app.py" long'):
            await agent.conn.prompt(session_id=session_id, prompt=[text_block(f"/mcp__docs__explain {typed}")])
            expanded.append(srv.requests[-1].body["messages"][-1]["content"])
            srv.enqueue(Reply.text("ok"))
    assert "mcp__docs__explain" not in {c.name for c in announced()[0].available_commands}  # not up yet
    explain = commands["mcp__docs__explain"]
    assert explain.description == "Explain one file of the project. (MCP server docs)"
    assert explain.input is not None and explain.input.root.hint == "<path> [depth]"
    # A slip is answered in the conversation (where the user typed it), not refused as a protocol error.
    assert slip.stop_reason == "end_turn"
    assert "needs path" in told and "/mcp__docs__explain <path> [depth]" in told
    assert expanded == [
        "Explain app.py (long version).",
        "Explain app.py (long version).",
        "Explain app.py (long version).",
        "Explain my app.py (long version).",
    ]


async def test_a_load_announces_its_commands_before_its_reply_and_the_mcp_prompts_once_the_server_is_up(
    settings: Settings, workspace: Path
) -> None:
    """The load's own announcement comes before its reply (ACP-LOAD-002); the MCP server's prompts are a change
    of the commands when the server comes up later, announced then, once."""
    async with inproc_agent(settings) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        session_id = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    async with inproc_agent(settings) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        await agent.conn.load_session(session_id=session_id, cwd=str(workspace), mcp_servers=[docs_server(new_tag())])
        at_reply = list(agent.client.updates(session_id))

        def announced() -> list[AvailableCommandsUpdate]:
            return [u for u in agent.client.updates(session_id) if isinstance(u, AvailableCommandsUpdate)]

        await agent.client.wait_for(lambda: len(announced()) >= 2, timeout=30)
        await agent.conn.list_sessions()  # a round trip: anything sent meanwhile has arrived
    first, later = announced()[0], announced()[1:]
    assert first in at_reply
    assert "mcp__docs__explain" not in {command.name for command in first.available_commands}  # not up yet
    assert [{command.name for command in update.available_commands} >= {"mcp__docs__explain"} for update in later] == [
        True
    ]
