"""The in-process harness itself: a prompt turn streams, and every line is checked against the schema."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, text_block

from coder_agent.config.settings import Settings
from coder_agent.scripted.script import FinishStep, Reply, TextStep, UsageStep
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.inproc import inproc_agent

pytestmark = pytest.mark.anyio


async def test_a_prompt_streams_its_reply_in_process(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    srv.enqueue(Reply(steps=[TextStep(pieces=["Hello", " there"]), FinishStep(), UsageStep()]))
    async with inproc_agent(settings) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
        response = await agent.conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        assert response.stop_reason == "end_turn"
        assert agent.client.agent_text(session.session_id) == "Hello there"
