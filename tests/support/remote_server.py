"""A real `coder-agent serve` server (uvicorn on 127.0.0.1) in this process, and published clients for it.

Every connection's wire is checked: what the client sent is shown to an `AgentMessageValidator`, and every line
the agent writes is checked against the ACP v1 schema before the transport sends it; the test fails on exit if any
line broke it. The clients are code nobody here wrote: the official SDK's WebSocket and Streamable HTTP
transports (`acp.ws`, `acp.http`), and `acpremote`'s WebSocket client and its proxy agent.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
import httpx
from acp import connect_to_agent
from acp._transport import memory_transport_pair
from acp.agent.connection import AgentSideConnection
from acp.client.connection import ClientSideConnection

from coder_agent.cli.serve import bind
from coder_agent.config.settings import Settings
from coder_agent.remote.connection import RemoteConnection
from coder_agent.remote.hub import Hub
from coder_agent.remote.options import ServeOptions
from coder_agent.remote.server import RemoteServer
from tests.support.acp_schema import AgentMessageValidator
from tests.support.recording_client import RecordingClient

TOKEN = "test-token-0123456789"
TEST_OPTIONS = ServeOptions(shutdown_timeout=10.0, release_wait=10.0)


@dataclass
class Running:
    port: int
    token: str
    server: RemoteServer
    connections: list[RemoteConnection] = field(default_factory=list)
    validators: list[AgentMessageValidator] = field(default_factory=list)
    client_lines: dict[str, int] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/acp"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/acp"

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    @property
    def hub(self) -> Hub:
        assert self.server.hub is not None
        return self.server.hub

    def write_buffered(self) -> int:
        """Bytes the server's transports hold that no client has taken yet (asyncio's write buffers)."""
        uvicorn = self.server._uvicorn
        assert uvicorn is not None
        return sum(
            transport.get_write_buffer_size()
            for protocol in uvicorn.server_state.connections
            if (transport := getattr(protocol, "transport", None)) is not None
        )

    def watch(self, connection: RemoteConnection) -> None:
        validator = AgentMessageValidator()
        connection.taps.append(validator.feed_client)
        self.client_lines[connection.id] = 0

        def count(line: bytes) -> None:
            self.client_lines[connection.id] += 1

        connection.taps.append(count)
        connection.outbox.taps.append(validator.feed_agent)
        self.connections.append(connection)
        self.validators.append(validator)

    def check(self) -> None:
        problems = []
        for connection, validator in zip(self.connections, self.validators, strict=True):
            validator.end_agent()
            if self.client_lines[connection.id] and not validator.agent_lines:
                problems.append(f"connection {connection.id}: the agent wrote nothing (not even to initialize)")
            elif validator.violations:
                problems.append(f"connection {connection.id}: {validator.report()}")
        if problems:
            raise AssertionError("\n".join(problems))


@asynccontextmanager
async def remote_server(
    settings: Settings,
    *,
    options: ServeOptions = TEST_OPTIONS,
    origins: tuple[str, ...] = (),
    timeout: float = 60.0,
) -> AsyncIterator[Running]:
    sock = bind("127.0.0.1", 0)
    server = RemoteServer(settings, TOKEN, origins, options)
    running = Running(sock.getsockname()[1], TOKEN, server)
    server.on_connection = running.watch
    async with anyio.create_task_group() as group:
        group.start_soon(server.serve, [sock])
        try:
            with anyio.fail_after(timeout):
                yield running
        finally:
            server.stop()
            group.cancel_scope.deadline = anyio.current_time() + 20
    running.check()


def http_client(running: Running, **headers: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(headers={**running.auth, **headers}, timeout=httpx.Timeout(30.0, read=None))


@asynccontextmanager
async def sdk_websocket(running: Running, client: RecordingClient) -> AsyncIterator[ClientSideConnection]:
    """The official SDK's client over its own WebSocket transport."""
    from acp.ws import create_websocket_stream

    transport = await create_websocket_stream(running.ws_url, headers=running.auth)
    conn = connect_to_agent(client, transport)
    try:
        yield conn
    finally:
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            await conn.close()


@asynccontextmanager
async def sdk_http(running: Running, client: RecordingClient) -> AsyncIterator[ClientSideConnection]:
    """The official SDK's client over its Streamable HTTP transport (POST, SSE streams, DELETE)."""
    from acp.http import create_http_stream

    async with http_client(running) as http:
        conn = connect_to_agent(client, create_http_stream(running.url, client=http))
        try:
            yield conn
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                await conn.close()


@asynccontextmanager
async def acpremote_websocket(running: Running, client: RecordingClient) -> AsyncIterator[ClientSideConnection]:
    """`acpremote`'s WebSocket client (the SDK's connection over its stream bridge)."""
    from acpremote import connect_remote_agent

    remote = await connect_remote_agent(client, running.ws_url, bearer_token=running.token)
    try:
        yield remote.connection
    finally:
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            await remote.close()


@asynccontextmanager
async def acpremote_proxy(
    running: Running, client: RecordingClient, **options: Any
) -> AsyncIterator[ClientSideConnection]:
    """The SDK client talking to `acpremote`'s proxy agent in this process, which forwards to the server.

    This is what `acpremote mirror ws://...` puts between an editor and a remote agent.
    """
    from acpremote import TransportOptions, connect_acp

    proxy = connect_acp(running.ws_url, bearer_token=running.token, options=TransportOptions(**options))
    agent_end, client_end = memory_transport_pair()
    agent_side = AgentSideConnection(proxy, agent_end, listening=True)
    conn = ClientSideConnection(client, client_end)
    try:
        yield conn
    finally:
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            await conn.close()
            await agent_side.close()
            with contextlib.suppress(Exception):
                await proxy.close()  # type: ignore[attr-defined]


class EventStreamReader:
    """One SSE stream of a Streamable HTTP connection, read by httpx: its JSON-RPC messages, in order."""

    def __init__(self) -> None:
        self._send, self._receive = anyio.create_memory_object_stream[dict[str, Any]](1000)
        self.status: int | None = None
        self.opened = anyio.Event()  # the server has answered (and attached the stream, when 200)
        self.ended = anyio.Event()
        self.passed_over: list[dict[str, Any]] = []  # the notifications `next_answer` went past
        self.event_ids: list[str] = []  # each event's `id`, as it arrived

    async def read(self, http: httpx.AsyncClient, url: str, headers: dict[str, str]) -> None:
        try:
            async with http.stream("GET", url, headers={"accept": "text/event-stream", **headers}) as response:
                self.status = response.status_code
                self.opened.set()
                async for line in response.aiter_lines():
                    if line.startswith("id: "):
                        self.event_ids.append(line[len("id: ") :])
                    elif line.startswith("data: "):
                        await self._send.send(json.loads(line[len("data: ") :]))
        finally:
            self.opened.set()
            self.ended.set()
            self._send.close()

    async def next(self, timeout: float = 10.0) -> dict[str, Any]:
        with anyio.fail_after(timeout):
            return await self._receive.receive()

    async def next_answer(self, timeout: float = 10.0) -> dict[str, Any]:
        """The next answer or request (a message with an id), past any notifications."""
        with anyio.fail_after(timeout):
            while "id" not in (item := await self._receive.receive()):
                self.passed_over.append(item)
            return item

    async def open(self, group: anyio.abc.TaskGroup, http: httpx.AsyncClient, url: str, **headers: str) -> None:
        group.start_soon(self.read, http, url, headers)
        with anyio.fail_after(10):
            await self.opened.wait()

    def ready(self) -> list[dict[str, Any]]:
        """What has arrived and not been taken yet."""
        items = []
        while True:
            try:
                items.append(self._receive.receive_nowait())
            except (anyio.WouldBlock, anyio.EndOfStream):
                return items
