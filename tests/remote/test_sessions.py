"""Connections share the sessions through the one store: a session is live on one connection at a time, and a
connection that goes away (closed, or killed mid-turn) loses nothing: its sessions load from another."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import anyio
import pytest
from acp import PROTOCOL_VERSION, RequestError, text_block
from acp.schema import AgentMessageChunk, TextContentBlock, UserMessageChunk

from coder_agent.config.settings import Settings
from coder_agent.scripted.script import FinishStep, Reply, SleepStep, TextStep
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.recording_client import RecordingClient
from tests.support.remote_server import acpremote_websocket, remote_server, sdk_http, sdk_websocket

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]


def texts(updates: list[object], kind: type) -> list[str]:
    return [u.content.text for u in updates if isinstance(u, kind) and isinstance(u.content, TextContentBlock)]


async def test_a_session_live_on_one_connection_is_refused_to_another_until_it_is_closed_there(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    srv.enqueue(Reply.text("first answer"), Reply.text("second answer"))
    first, second = RecordingClient(), RecordingClient()
    async with (
        remote_server(settings) as running,
        sdk_websocket(running, first) as a,
        sdk_http(running, second) as b,
    ):
        await a.initialize(protocol_version=PROTOCOL_VERSION)
        await b.initialize(protocol_version=PROTOCOL_VERSION)
        session = (await a.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await a.prompt(session_id=session, prompt=[text_block("hi")])
        with pytest.raises(RequestError) as refused:
            await b.load_session(session_id=session, cwd=str(workspace), mcp_servers=[])
        assert refused.value.code == -32602
        assert "open on another connection" in str(refused.value)
        with pytest.raises(RequestError):
            await b.resume_session(session_id=session, cwd=str(workspace))

        await a.close_session(session_id=session)
        await b.load_session(session_id=session, cwd=str(workspace), mcp_servers=[])
        replayed = second.updates(session)
        assert texts(replayed, UserMessageChunk) == ["hi"]
        assert "".join(texts(replayed, AgentMessageChunk)) == "first answer"
        response = await b.prompt(session_id=session, prompt=[text_block("again")])
        assert response.stop_reason == "end_turn"
        with pytest.raises(RequestError) as refused_back:  # now B holds it
            await a.load_session(session_id=session, cwd=str(workspace), mcp_servers=[])
        assert refused_back.value.code == -32602
    assert second.agent_text(session).endswith("second answer")


async def test_deleting_a_session_live_on_another_connection_is_refused(settings: Settings, workspace: Path) -> None:
    async with (
        remote_server(settings) as running,
        sdk_websocket(running, RecordingClient()) as a,
        sdk_websocket(running, RecordingClient()) as b,
    ):
        await a.initialize(protocol_version=PROTOCOL_VERSION)
        await b.initialize(protocol_version=PROTOCOL_VERSION)
        session = (await a.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        with pytest.raises(RequestError) as refused:
            # session/delete is stable in ACP v1, but the SDK's client has no method for it yet
            await b._conn.send_request("session/delete", {"sessionId": session})
        assert refused.value.code == -32602
        listed = await b.list_sessions()
        assert session in [info.session_id for info in listed.sessions]


async def test_a_session_of_a_connection_that_ended_loads_from_another(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    srv.enqueue(Reply.text("kept"), Reply.text("still here"))
    client = RecordingClient()
    async with remote_server(settings) as running:
        async with sdk_http(running, RecordingClient()) as a:
            await a.initialize(protocol_version=PROTOCOL_VERSION)
            session = (await a.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            await a.prompt(session_id=session, prompt=[text_block("remember this")])
        # `a` ended (DELETE) with its session live: no session/close was sent
        async with acpremote_websocket(running, client) as b:
            await b.initialize(protocol_version=PROTOCOL_VERSION)
            await b.load_session(session_id=session, cwd=str(workspace), mcp_servers=[])
            response = await b.prompt(session_id=session, prompt=[text_block("and now?")])
    assert response.stop_reason == "end_turn"
    assert "".join(texts(client.updates(session), AgentMessageChunk)) == "keptstill here"
    sent = [m["content"] for m in srv.requests[-1].body["messages"] if m["role"] == "user"]
    assert any("remember this" in str(content) for content in sent)


@pytest.mark.e2e
async def test_a_client_killed_mid_turn_loses_nothing_and_its_session_loads_on_another_connection(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    srv.enqueue(
        Reply(steps=[TextStep(pieces=["Once upon ", "a time"]), SleepStep(seconds=60), FinishStep()]),
        Reply.text("The end."),
    )
    client = RecordingClient()
    async with remote_server(settings) as running:
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        command = [sys.executable, "-m", "tests.remote.killed_client", running.ws_url, running.token, str(workspace)]
        async with await anyio.open_process(command, env=env, cwd=REPO) as process:
            assert process.stdout is not None
            lines = b""
            with anyio.fail_after(30):
                async for chunk in process.stdout:
                    lines += chunk
                    if b"streaming" in lines:
                        break
            session = lines.split(b"\n")[0].decode()
            process.send_signal(signal.SIGKILL)
        [killed] = running.connections

        async with sdk_websocket(running, client) as b:
            await b.initialize(protocol_version=PROTOCOL_VERSION)
            await b.load_session(session_id=session, cwd=str(workspace), mcp_servers=[])
            replayed = client.updates(session)
            response = await b.prompt(session_id=session, prompt=[text_block("go on")])
        assert killed.ended.is_set()
    assert killed.close_reason == "the client closed the WebSocket"
    assert texts(replayed, UserMessageChunk) == ["tell me a long story"]
    assert "".join(texts(replayed, AgentMessageChunk)).startswith("Once upon a time")
    assert response.stop_reason == "end_turn"
    assert client.agent_text(session).endswith("The end.")
    history = srv.requests[-1].body["messages"]
    assert [m["role"] for m in history if m["role"] != "system"][:2] == ["user", "assistant"]
