"""Token holders cannot grow the server's memory without bound: the clients' messages it holds share one budget
(a message waits for room, and is refused when none comes in time), a ping flood from a client that reads nothing
piles up no answers, and an absurd request id is refused rather than kept."""

from __future__ import annotations

import json
import os
import socket
import tracemalloc
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from coder_agent.config.settings import Settings
from tests.support.remote_server import TEST_OPTIONS, EventStreamReader, Running, http_client, remote_server

pytestmark = pytest.mark.anyio

KiB = 1024
JSON = {"content-type": "application/json"}


def padded(request_id: int, size: int) -> str:
    """A request to an extension method the agent does not know (answered -32601), about `size` bytes long."""
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "_pad/x", "params": {"pad": "x" * size}})


def initialize(request_id: Any = 1) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": {"protocolVersion": 1}})


async def open_http(http: httpx.AsyncClient, running: Running, group: Any) -> tuple[dict[str, str], EventStreamReader]:
    init = await http.post(running.url, content=initialize(), headers=JSON)
    assert init.status_code == 200
    headers = {**JSON, "acp-connection-id": init.headers["acp-connection-id"]}
    stream = EventStreamReader()
    await stream.open(group, http, running.url, **{"acp-connection-id": headers["acp-connection-id"]})
    return headers, stream


async def test_large_messages_at_once_on_many_connections_wait_for_room_and_all_are_answered(
    settings: Settings,
) -> None:
    options = replace(TEST_OPTIONS, max_message_bytes=256 * KiB, max_inbound_bytes=512 * KiB)
    answers: list[dict[str, Any]] = []
    async with remote_server(settings, options=options) as running:

        async def websocket_client() -> None:
            async with connect(running.ws_url, additional_headers=running.auth, max_size=None) as ws:
                await ws.send(initialize())
                await ws.recv()
                for n in range(2, 6):
                    await ws.send(padded(n, 200 * KiB))
                for _ in range(2, 6):
                    answers.append(json.loads(await ws.recv()))

        async def http_client_() -> None:
            async with http_client(running) as http, anyio.create_task_group() as group:
                headers, stream = await open_http(http, running, group)

                async def post(n: int) -> None:
                    response = await http.post(running.url, content=padded(n, 200 * KiB), headers=headers)
                    assert response.status_code == 202

                async with anyio.create_task_group() as posts:
                    for n in range(2, 6):
                        posts.start_soon(post, n)
                for _ in range(2, 6):
                    answers.append(await stream.next_answer())
                group.cancel_scope.cancel()

        async with anyio.create_task_group() as group:
            for _ in range(4):
                group.start_soon(websocket_client)
                group.start_soon(http_client_)
        budget = running.hub.budget
        with anyio.fail_after(10):  # each is let go once its agent has taken it
            while budget.used:
                await budget.changed.wait()
    assert len(answers) == 32 and all(answer["error"]["code"] == -32601 for answer in answers)
    assert 200 * KiB < budget.peak <= 512 * KiB


async def test_a_message_that_finds_no_room_in_time_is_refused_with_503_or_close_1013(settings: Settings) -> None:
    options = replace(
        TEST_OPTIONS, max_message_bytes=64 * KiB, max_inbound_bytes=64 * KiB, inbound_wait=0.5, detach_timeout=60
    )
    async with remote_server(settings, options=options) as running, http_client(running) as http:
        init = await http.post(running.url, content=initialize(), headers=JSON)
        connection_id = init.headers["acp-connection-id"]
        ws = await connect(running.ws_url, additional_headers=running.auth)
        await ws.send(initialize())
        await ws.recv()
        with socket.create_connection(("127.0.0.1", running.port)) as holder:
            # A body announced whole and sent by half: all of it is counted from the start, and stays counted.
            holder.sendall(
                (
                    f"POST /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {running.token}\r\n"
                    f"Content-Type: application/json\r\nAcp-Connection-Id: {connection_id}\r\n"
                    f"Content-Length: {64 * KiB}\r\n\r\n"
                ).encode()
                + b" " * (32 * KiB)
            )
            with anyio.fail_after(10):
                while running.hub.budget.used < 64 * KiB:
                    await running.hub.budget.changed.wait()
            busy = await http.post(
                running.url, content=padded(2, 1 * KiB), headers={**JSON, "acp-connection-id": connection_id}
            )
            await ws.send(padded(2, 1 * KiB))
            with anyio.fail_after(10), pytest.raises(ConnectionClosed) as closed:
                await ws.recv()
        with anyio.fail_after(10):  # the half-sent body was dropped with its connection
            while running.hub.budget.used:
                await running.hub.budget.changed.wait()
        after = await http.post(
            running.url, content=padded(3, 1 * KiB), headers={**JSON, "acp-connection-id": connection_id}
        )
    assert busy.status_code == 503 and "try again later" in busy.json()["error"]
    assert busy.headers["retry-after"]
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1013
    assert after.status_code == 202


def websocket_handshake(port: int, token: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.sendall(
        (
            f"GET /acp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    sock.settimeout(10)
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert head.startswith(b"HTTP/1.1 101"), head
    sock.setblocking(False)
    return sock


def ping_frame(payload: bytes) -> bytes:
    mask = os.urandom(4)
    return bytes([0x89, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


async def test_a_ping_flood_from_a_client_that_reads_nothing_piles_up_no_answers(settings: Settings) -> None:
    flood = ping_frame(b"p" * 125) * 500  # 64 kB of pings: each is answered with a pong of the same size
    bound = 512 * KiB
    async with remote_server(settings) as running:
        sock = await anyio.to_thread.run_sync(websocket_handshake, running.port, running.token)
        sent, most = 0, 0
        try:
            while sent < 16 * 1024 * KiB:
                try:
                    sent += sock.send(flood)
                except BlockingIOError:
                    with anyio.move_on_after(2) as quiet:  # the server stopped reading from it: done
                        await anyio.wait_writable(sock)
                    if quiet.cancelled_caught:
                        break
                await anyio.lowlevel.checkpoint()  # let the server read and answer
                most = max(most, running.write_buffered())
                assert most <= bound, f"{most} bytes of answers wait for a client that reads nothing"
        finally:
            sock.close()
    assert sent < 16 * 1024 * KiB  # it could not send on and on


async def test_a_request_id_longer_than_256_characters_is_refused_and_not_kept(settings: Settings) -> None:
    long_id = "i" * (1024 * KiB)
    async with remote_server(settings) as running, http_client(running) as http, anyio.create_task_group() as group:
        headers, stream = await open_http(http, running, group)
        refused = []
        for request_id in (long_id, {"nested": long_id}):
            body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "session/list", "params": {}})
            assert (await http.post(running.url, content=body, headers=headers)).status_code == 202
            refused.append(await stream.next())
        lanes = running.hub.http_lanes[headers["acp-connection-id"]]
        kept = lanes.awaiting_answers
        async with connect(running.ws_url, additional_headers=running.auth, max_size=None) as ws:
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": long_id, "method": "initialize", "params": {}}))
            over_websocket = json.loads(await ws.recv())
        group.cancel_scope.cancel()
    for answer in (*refused, over_websocket):
        assert answer["id"] is None and answer["error"]["code"] == -32600, str(answer)[:200]
    assert "longer than 256 characters" in refused[0]["error"]["data"]["detail"]
    assert kept == 0


async def test_a_large_message_leaves_nothing_of_it_in_the_server_once_answered(
    make_settings: Any, workspace: Path
) -> None:
    # No model: each prompt is parsed, checked and refused (-32000), and the connection stays open and idle. Nothing
    # of the message may stay behind: not in a loop variable, not in websockets' parser, not in a cycle of frames
    # that only the cyclic GC (which large objects do not prompt) would free.
    text = "x" * (4 * 1024 * KiB)
    tracemalloc.start()
    try:
        async with (
            remote_server(make_settings(model=None)) as running,
            http_client(running) as http,
            anyio.create_task_group() as group,
        ):
            headers, stream = await open_http(http, running, group)
            new = json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "session/new",
                    "params": {"cwd": str(workspace), "mcpServers": []},
                }
            )
            await http.post(running.url, content=new, headers=headers)
            session = (await stream.next_answer())["result"]["sessionId"]
            prompt = json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "method": "session/prompt",
                    "params": {"sessionId": session, "prompt": [{"type": "text", "text": text}]},
                }
            )
            ws = await connect(running.ws_url, additional_headers=running.auth, max_size=None)
            await ws.send(initialize())
            await ws.recv()
            await ws.send(new)
            while "sessionId" not in (answer := json.loads(await ws.recv())).get("result", {}):
                pass
            ws_prompt = prompt.replace(session, answer["result"]["sessionId"])
            posted = prompt.encode()  # the client's copies are made before the count starts
            before = tracemalloc.get_traced_memory()[0]
            await ws.send(ws_prompt)
            while json.loads(await ws.recv()).get("id") != 3:
                pass
            assert (await http.post(running.url, content=posted, headers=headers)).status_code == 202
            refused = await stream.next_answer()
            kept = tracemalloc.get_traced_memory()[0] - before
            await ws.close()
            group.cancel_scope.cancel()
    finally:
        tracemalloc.stop()
    assert refused["error"]["code"] == -32000
    assert kept < 1024 * KiB, f"{kept} bytes kept after two messages of {len(text)} were answered"
