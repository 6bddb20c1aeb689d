"""Slowloris against a real `coder-agent serve` with the usual 1,024 open files: more half-sent requests than that,
from several addresses, lock out neither `/health` nor a token holder, and are closed after the header timeout."""

from __future__ import annotations

import select
import socket
import time
from pathlib import Path

import anyio
import httpx
import pytest
from acp import PROTOCOL_VERSION, connect_to_agent
from acp.ws import create_websocket_stream

from coder_agent.remote.options import ServeOptions
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.recording_client import RecordingClient
from tests.support.served import agent_env, serve

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

TOKEN = "slowloris-test-token-0123"
OPEN_FILES = 1024
ADDRESSES = [f"127.0.0.{n}" for n in range(2, 13)]  # the attacker's; token holders come from 127.0.0.1
PER_ADDRESS = 100  # 1,100 in all: more than the server may open
HEADER_TIMEOUT = 2.0
HALF_SENT = b"GET /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "  # and never the rest


def open_half_sent(port: int) -> list[socket.socket]:
    """Connect from each attacker address and send half a request head; blocking, each step bounded."""
    opened = []
    for _ in range(PER_ADDRESS):
        for address in ADDRESSES:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.settimeout(5)
            sock.bind((address, 0))
            try:
                sock.connect(("127.0.0.1", port))
                sock.sendall(HALF_SENT)
            except OSError:  # closed at once by the server: it made room
                pass
            opened.append(sock)
    return opened


def wait_closed(socks: list[socket.socket], at_most: int, timeout: float) -> float:
    """Block until the server has closed all but `at_most` of `socks` (each then has an end to read); how long that
    took. Raises TimeoutError past `timeout`."""
    poller = select.poll()  # not select(): these descriptors go past 1,024
    alive = {sock.fileno() for sock in socks if sock.fileno() >= 0}
    for fd in alive:
        poller.register(fd, select.POLLIN)
    start = time.monotonic()
    while len(alive) > at_most:
        left = timeout - (time.monotonic() - start)
        if left <= 0:
            raise TimeoutError(f"{len(alive)} connections still open")
        for fd, _ in poller.poll(left * 1000):
            poller.unregister(fd)
            alive.discard(fd)
    return time.monotonic() - start


async def until_closed_but(socks: list[socket.socket], at_most: int, timeout: float) -> float:
    return await anyio.to_thread.run_sync(wait_closed, socks, at_most, timeout)


async def test_half_sent_requests_lock_out_neither_health_nor_token_holders_and_are_closed_after_the_timeout(
    tmp_path: Path, srv: ScriptedModelServer, workspace: Path
) -> None:
    env = agent_env(tmp_path, srv, CODER_AGENT_SERVE_TOKEN=TOKEN)
    limits = ServeOptions()
    async with serve(env, "--header-timeout", str(HEADER_TIMEOUT), open_files=OPEN_FILES) as served:
        attack = await anyio.to_thread.run_sync(open_half_sent, served.port)
        try:
            assert len(attack) > OPEN_FILES
            # At most the bound of unauthenticated connections stays open; the rest were closed to make room.
            await until_closed_but(attack, limits.max_unauthenticated, timeout=10)
            with anyio.fail_after(10):
                async with httpx.AsyncClient(timeout=10) as http:
                    health = await http.get(f"http://127.0.0.1:{served.port}/health")
                transport = await create_websocket_stream(
                    f"ws://127.0.0.1:{served.port}/acp", headers={"Authorization": f"Bearer {TOKEN}"}
                )
                conn = connect_to_agent(RecordingClient(), transport)
                init = await conn.initialize(protocol_version=PROTOCOL_VERSION)
                session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
                await conn.close()
            # The ones left open are closed once their head is late.
            waited = await until_closed_but(attack, 0, timeout=HEADER_TIMEOUT + 10)
        finally:
            for sock in attack:
                sock.close()
    assert health.status_code == 200
    assert init.protocol_version == PROTOCOL_VERSION and session.session_id.startswith("sess_")
    assert waited <= HEADER_TIMEOUT + 5
    assert "closing connections that have not shown the token" in served.text


def open_files_limits(pid: int) -> tuple[str, str]:
    with open(f"/proc/{pid}/limits") as limits:
        for line in limits:
            if line.startswith("Max open files"):
                soft, hard = line.split()[3:5]
                return soft, hard
    raise AssertionError("no open files limit")


async def test_serve_raises_its_soft_limit_of_open_files_to_the_hard_one(
    tmp_path: Path, srv: ScriptedModelServer
) -> None:
    async with serve(agent_env(tmp_path, srv), soft_open_files=OPEN_FILES) as served:
        soft, hard = open_files_limits(served.process.pid)
    assert soft == hard  # (1,024 both where the hard limit is that too)
