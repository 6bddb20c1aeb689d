"""Published remote clients drive the agent over `/acp` as an editor does over stdio: prompts stream, the agent's
own requests (permission) reach the client and its answers come back."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, text_block
from acp.client.connection import ClientSideConnection

from coder_agent.config.settings import Settings
from coder_agent.scripted.script import FinishStep, Reply, TextStep, ToolCallStep, UsageStep
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.acp_client import base_env, spawn_agent
from tests.support.recording_client import RecordingClient
from tests.support.remote_server import (
    Running,
    acpremote_proxy,
    acpremote_websocket,
    remote_server,
    sdk_http,
    sdk_websocket,
)

pytestmark = pytest.mark.anyio

Opener = Callable[[Running, RecordingClient], AbstractAsyncContextManager[ClientSideConnection]]
CLIENTS: dict[str, Opener] = {
    "sdk-websocket": sdk_websocket,
    "sdk-streamable-http": sdk_http,
    "acpremote-websocket": acpremote_websocket,
    "acpremote-proxy": acpremote_proxy,
}


@pytest.mark.parametrize("kind", CLIENTS)
async def test_a_prompt_streams_its_reply_to_each_remote_client(
    settings: Settings, srv: ScriptedModelServer, workspace: Path, kind: str
) -> None:
    srv.enqueue(Reply(steps=[TextStep(pieces=["Hello", " there"]), FinishStep(), UsageStep()]))
    client = RecordingClient()
    async with remote_server(settings) as running, CLIENTS[kind](running, client) as conn:
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
    assert init.agent_info is not None and init.agent_info.name == "coder-agent"
    assert response.stop_reason == "end_turn"
    assert client.agent_text(session.session_id) == "Hello there"


@pytest.mark.parametrize("kind", CLIENTS)
async def test_the_agent_asks_the_remote_client_for_permission_and_acts_on_its_answer(
    settings: Settings, srv: ScriptedModelServer, workspace: Path, kind: str
) -> None:
    target = workspace / "new.txt"
    call = ToolCallStep(name="write_file", id="c1", arguments=json.dumps({"path": str(target), "content": "hi\n"}))
    srv.enqueue(Reply.tool_calls([call]), Reply.text("written"))
    client = RecordingClient(permission="allow_once")
    async with remote_server(settings) as running, CLIENTS[kind](running, client) as conn:
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("write it")])
    assert response.stop_reason == "end_turn"
    assert len(client.permission_requests) == 1
    assert target.read_text() == "hi\n"
    assert client.agent_text(session.session_id) == "written\n\n**Changed 1 file**\n- `new.txt` +1 -0 (created)"


@pytest.mark.e2e
async def test_an_editor_reaches_the_server_through_the_acpremote_mirror_command(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    """What README suggests for an editor that only launches stdio agents: `acpremote mirror` as the agent."""
    srv.enqueue(Reply.text("mirrored"))
    client = RecordingClient()
    async with remote_server(settings) as running:
        command = [sys.executable, "-m", "acpremote", "mirror", running.ws_url, "--token-env", "SERVE_TOKEN"]
        env = {**base_env(), "SERVE_TOKEN": running.token}
        async with spawn_agent(env, client=client, command=command, cwd=workspace) as editor:
            await editor.conn.initialize(protocol_version=PROTOCOL_VERSION)
            session = await editor.conn.new_session(cwd=str(workspace), mcp_servers=[])
            response = await editor.conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
    assert response.stop_reason == "end_turn"
    assert client.agent_text(session.session_id) == "mirrored"
