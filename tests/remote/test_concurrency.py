"""Many connections at once: each is its own ACP connection, and none waits for another."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from acp import PROTOCOL_VERSION, text_block

from coder_agent.config.settings import Settings
from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.recording_client import RecordingClient
from tests.support.remote_server import Running, acpremote_websocket, remote_server, sdk_http, sdk_websocket

pytestmark = pytest.mark.anyio

CONNECTIONS = 20


async def test_twenty_connections_at_once_each_run_their_own_session_and_turn(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    srv.enqueue(*(Reply.text("done here") for _ in range(CONNECTIONS)))
    openers = [sdk_websocket, sdk_http, acpremote_websocket]
    results: dict[int, tuple[str, str, str]] = {}

    async def one(running: Running, index: int) -> None:
        client = RecordingClient()
        async with openers[index % len(openers)](running, client) as conn:
            await conn.initialize(protocol_version=PROTOCOL_VERSION)
            session = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            response = await conn.prompt(session_id=session, prompt=[text_block(f"task {index}")])
            results[index] = (session, response.stop_reason, client.agent_text(session))

    async with remote_server(settings) as running:
        async with anyio.create_task_group() as group:
            for index in range(CONNECTIONS):
                group.start_soon(one, running, index)
        opened = len(running.connections)
    assert opened == CONNECTIONS
    assert sorted(results) == list(range(CONNECTIONS))
    assert len({session for session, _, _ in results.values()}) == CONNECTIONS
    assert {(stop, text) for _, stop, text in results.values()} == {("end_turn", "done here")}
    prompts = sorted(str(m["content"]) for r in srv.requests for m in r.body["messages"] if m["role"] == "user")
    assert len(prompts) == CONNECTIONS and all(any(f"task {i}" in p for p in prompts) for i in range(CONNECTIONS))
