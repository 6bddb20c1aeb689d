"""A project's command file that links to the user's secrets: in the menu as not read, never sent to the model."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, text_block
from acp.schema import AgentMessageChunk

from coder_agent.config.settings import Settings
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.hostile_checkout import SECRET, lay_out
from tests.support.inproc import inproc_agent
from tests.support.server_helpers import commands_of

pytestmark = pytest.mark.anyio


async def test_a_command_file_linked_outside_the_project_is_named_in_the_menu_as_not_read_and_sends_nothing(
    settings: Settings, srv: ScriptedModelServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    checkout = lay_out(["command-credentials"], tmp_path / "project", tmp_path / "home")
    async with inproc_agent(settings) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        session_id = (await agent.conn.new_session(cwd=str(checkout.project), mcp_servers=[])).session_id
        commands = await commands_of(agent, session_id)
        done = await agent.conn.prompt(session_id=session_id, prompt=[text_block("/x now")])
        said = [
            u.content.text
            for u in agent.client.updates(session_id)
            if isinstance(u, AgentMessageChunk) and hasattr(u.content, "text")
        ]
    why = f"it leads outside the project's folders ({checkout.credentials})"
    assert commands["x"].description == f"not read: {why} (project)"
    assert commands["x"].input is None
    assert done.stop_reason == "end_turn"
    assert said == [f"/x was not run: {checkout.project / '.coder-agent/commands/x.md'} was not read: {why}."]
    assert srv.requests == []  # the model was not called, so saw nothing of it
    assert SECRET not in caplog.text and "not read" in caplog.text
