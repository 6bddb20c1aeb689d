"""A client that stops reading: the server buffers a bounded amount for it, holds up nobody else, and gives the
connection up once the client has read nothing for `stall_timeout`. Its session loses nothing."""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import PROTOCOL_VERSION, text_block
from acp.schema import AgentMessageChunk, TextContentBlock
from websockets.asyncio.client import connect

from coder_agent.config.settings import Settings
from coder_agent.scripted.script import FinishStep, Reply, TextStep
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.recording_client import RecordingClient
from tests.support.remote_server import TEST_OPTIONS, Running, http_client, remote_server, sdk_websocket

pytestmark = pytest.mark.anyio

LIMIT = 128 * 1024
PIECE = "x" * 20_000
# 1.2 MB of updates, in few of them (each is schema-checked): more than the limit and the socket buffers hold
LONG_REPLY = Reply(steps=[TextStep(pieces=[PIECE] * 60), FinishStep()])
SLACK = 21_000  # one update (a chunk and its envelope) may go past the limit


def request(request_id: int, method: str, params: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


@contextmanager
def small_socket(port: int) -> Iterator[socket.socket]:
    """A TCP connection with a small receive buffer, so what the client does not read stays on the server."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    try:
        sock.connect(("127.0.0.1", port))
        yield sock
    finally:
        sock.close()


def read_session_id(sock: socket.socket) -> str:
    """Read the SSE stream up to the session/new answer (blocking, bounded), and no further."""
    sock.settimeout(10)
    seen = b""
    while (match := re.search(rb'"sessionId":"([^"]+)"', seen)) is None:
        seen += sock.recv(4096)
    return match.group(1).decode()


async def start_then_stop_reading(running: Running, workspace: Path, sock: socket.socket) -> Any:
    """A WebSocket client that opens a session, sends a prompt, and reads nothing more; returns the socket."""
    # No permessage-deflate: the bound is on the agent's JSON, and compressed chunks of "x" take no room on the wire.
    ws = await connect(running.ws_url, sock=sock, additional_headers=running.auth, max_queue=1, compression=None)
    await ws.send(request(1, "initialize", {"protocolVersion": PROTOCOL_VERSION}))
    await ws.recv()
    await ws.send(request(2, "session/new", {"cwd": str(workspace), "mcpServers": []}))
    session = json.loads(await ws.recv())["result"]["sessionId"]
    await ws.send(request(3, "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}))
    return ws, session


async def test_a_client_that_stops_reading_holds_up_no_other_connection(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    srv.enqueue(LONG_REPLY, Reply.text("not held up"))
    options = replace(TEST_OPTIONS, max_buffer_bytes=LIMIT, stall_timeout=60.0)
    other = RecordingClient()
    async with remote_server(settings, options=options) as running:
        with small_socket(running.port) as sock:
            ws, _ = await start_then_stop_reading(running, workspace, sock)
            [slow] = running.connections
            with anyio.fail_after(30):
                await slow.outbox.backpressure.wait()
            async with sdk_websocket(running, other) as conn:
                await conn.initialize(protocol_version=PROTOCOL_VERSION)
                session = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
                response = await conn.prompt(session_id=session, prompt=[text_block("hi")])
            assert not slow.ended.is_set()
            assert LIMIT - SLACK <= slow.outbox.queued_bytes <= LIMIT + SLACK
            ws.transport.abort()  # a stuck client would not take a close frame either
    assert response.stop_reason == "end_turn"
    assert other.agent_text(session) == "not held up"


async def test_a_websocket_client_that_stops_reading_is_disconnected_after_a_bounded_buffer(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    srv.enqueue(LONG_REPLY)
    options = replace(TEST_OPTIONS, max_buffer_bytes=LIMIT, stall_timeout=0.5)
    later = RecordingClient()
    async with remote_server(settings, options=options) as running:
        with small_socket(running.port) as sock:
            ws, session = await start_then_stop_reading(running, workspace, sock)
            [slow] = running.connections
            with anyio.fail_after(30):
                await slow.ended.wait()
            ws.transport.abort()  # a stuck client would not take a close frame either
        assert slow.close_reason is not None and "read nothing for 0.5 s" in slow.close_reason
        assert LIMIT - SLACK <= slow.outbox.peak_bytes <= LIMIT + SLACK
        async with sdk_websocket(running, later) as conn:  # the session was saved and let go
            await conn.initialize(protocol_version=PROTOCOL_VERSION)
            await conn.load_session(session_id=session, cwd=str(workspace), mcp_servers=[])
    replayed = "".join(
        u.content.text
        for u in later.updates(session)
        if isinstance(u, AgentMessageChunk) and isinstance(u.content, TextContentBlock)
    )
    assert replayed and set(replayed) == {"x"}  # what the agent said before it stopped, kept in full
    assert len(replayed) > 2 * LIMIT  # more than the client could have been sent


async def test_an_sse_client_that_stops_reading_is_disconnected_after_a_bounded_buffer(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    srv.enqueue(LONG_REPLY)
    options = replace(TEST_OPTIONS, max_buffer_bytes=LIMIT, stall_timeout=0.5)
    async with remote_server(settings, options=options) as running, http_client(running) as http:
        init = await http.post(
            running.url,
            content=request(1, "initialize", {"protocolVersion": 1}),
            headers={"content-type": "application/json"},
        )
        connection_id = init.headers["acp-connection-id"]
        headers = {"content-type": "application/json", "acp-connection-id": connection_id}
        with small_socket(running.port) as sock:
            sock.sendall(
                (
                    f"GET /acp HTTP/1.1\r\nHost: 127.0.0.1:{running.port}\r\nAuthorization: Bearer {running.token}\r\n"
                    f"Accept: text/event-stream\r\nAcp-Connection-Id: {connection_id}\r\n\r\n"
                ).encode()
            )
            new = request(2, "session/new", {"cwd": str(workspace), "mcpServers": []})
            assert (await http.post(running.url, content=new, headers=headers)).status_code == 202
            session = await anyio.to_thread.run_sync(read_session_id, sock)  # then it reads nothing more
            prompt = request(3, "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]})
            assert (await http.post(running.url, content=prompt, headers=headers)).status_code == 202
            [slow] = running.connections
            with anyio.fail_after(30):
                await slow.ended.wait()
        assert slow.close_reason is not None and "read nothing for 0.5 s" in slow.close_reason
        assert LIMIT - SLACK <= slow.outbox.peak_bytes <= LIMIT + SLACK
        after = await http.post(running.url, content=prompt, headers=headers)
        assert after.status_code == 404


async def test_a_client_that_stops_reading_with_less_than_the_bound_pending_is_disconnected_on_time(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    # 600 kB: more than the socket buffers hold, less than the 1 MiB bound. The turn ends, the agent writes no
    # more, and what it wrote waits for a client that reads nothing.
    srv.enqueue(Reply(steps=[TextStep(pieces=[PIECE] * 30), FinishStep()]))
    options = replace(TEST_OPTIONS, stall_timeout=0.5)
    later = RecordingClient()
    async with remote_server(settings, options=options) as running, http_client(running) as http:
        init = await http.post(
            running.url,
            content=request(1, "initialize", {"protocolVersion": 1}),
            headers={"content-type": "application/json"},
        )
        connection_id = init.headers["acp-connection-id"]
        headers = {"content-type": "application/json", "acp-connection-id": connection_id}
        [slow] = running.connections
        said: list[str] = []  # the text of each chunk the agent wrote
        slow.outbox.taps.append(lambda line: said.extend(re.findall(r'"text":"(x+)"', line.decode())))
        with small_socket(running.port) as sock:
            sock.sendall(
                (
                    f"GET /acp HTTP/1.1\r\nHost: 127.0.0.1:{running.port}\r\nAuthorization: Bearer {running.token}\r\n"
                    f"Accept: text/event-stream\r\nAcp-Connection-Id: {connection_id}\r\n\r\n"
                ).encode()
            )
            new = request(2, "session/new", {"cwd": str(workspace), "mcpServers": []})
            assert (await http.post(running.url, content=new, headers=headers)).status_code == 202
            session = await anyio.to_thread.run_sync(read_session_id, sock)  # then it reads nothing more
            prompt = request(3, "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]})
            assert (await http.post(running.url, content=prompt, headers=headers)).status_code == 202
            with anyio.fail_after(15):
                await slow.ended.wait()
        assert slow.close_reason is not None and "read nothing for 0.5 s" in slow.close_reason
        assert slow.outbox.peak_bytes < options.max_buffer_bytes
        async with sdk_websocket(running, later) as conn:  # its session was saved and let go
            await conn.initialize(protocol_version=PROTOCOL_VERSION)
            await conn.load_session(session_id=session, cwd=str(workspace), mcp_servers=[])
    replayed = "".join(
        u.content.text
        for u in later.updates(session)
        if isinstance(u, AgentMessageChunk) and isinstance(u.content, TextContentBlock)
    )
    # What the agent said before it stopped (all of it, unless the turn was still going: then it was cancelled) is
    # kept, although the client never read it; each update is stored before it is sent.
    assert said and replayed.startswith("".join(said)) and set(replayed) == {"x"}
