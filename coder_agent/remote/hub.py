"""What the server's connections share: the settings, the session claims, the open connections, the limits (the
inbound budget, the admission of connections that have not shown the token)."""

from __future__ import annotations

import logging
from collections.abc import Callable

import anyio
import anyio.abc

from ..config.settings import Settings
from .admission import Admission
from .budget import InboundBudget
from .claims import Claims
from .connection import RemoteConnection
from .options import ServeOptions
from .routing import HttpLanes

log = logging.getLogger(__name__)


class Unavailable(Exception):
    """No new connection now: too many are open, or the server is shutting down."""


class Hub:
    def __init__(
        self,
        settings: Settings,
        options: ServeOptions,
        task_group: anyio.abc.TaskGroup,
        budget: InboundBudget,
        admission: Admission,
    ) -> None:
        self.settings = settings
        self.options = options
        self.budget = budget  # the clients' messages held, across connections
        self.admission = admission  # the TCP connections that have not shown the token yet
        self.claims = Claims(options.release_wait)
        self.connections: dict[str, RemoteConnection] = {}
        self.http_lanes: dict[str, HttpLanes] = {}
        self._task_group = task_group
        self.accepting = True
        self.on_connection: Callable[[RemoteConnection], None] | None = None  # tests and benchmarks look in

    def open(self, transport: str) -> RemoteConnection:
        if not self.accepting:
            raise Unavailable("the server is shutting down")
        if len(self.connections) >= self.options.max_connections:
            raise Unavailable(f"at most {self.options.max_connections} connections")
        connection = RemoteConnection(self.settings, self.options, self.claims, transport)
        self.connections[connection.id] = connection
        if self.on_connection is not None:
            self.on_connection(connection)
        self._task_group.start_soon(self._run, connection)
        log.info("connection %s opened (%s)", connection.id, transport)
        return connection

    def open_http(self) -> tuple[RemoteConnection, HttpLanes]:
        connection = self.open("http")
        lanes = self.http_lanes[connection.id] = HttpLanes(connection.outbox)
        self._task_group.start_soon(self._watch_stream, connection, lanes)
        return connection, lanes

    async def _run(self, connection: RemoteConnection) -> None:
        try:
            await connection.run()
        finally:
            self.connections.pop(connection.id, None)
            self.http_lanes.pop(connection.id, None)

    async def _watch_stream(self, connection: RemoteConnection, lanes: HttpLanes) -> None:
        """End an HTTP connection whose client has not had its connection stream open for `detach_timeout`."""
        timeout = self.options.detach_timeout
        lane = lanes.connection
        while not connection.ended.is_set() and not connection.outbox.closed:
            changed = lane.changed
            if lane.is_attached:
                await changed.wait()
                continue
            with anyio.move_on_after(timeout):
                await changed.wait()
                continue
            connection.close(f"no connection stream (GET) open for {timeout:g} s")
            return

    async def close_all(self) -> None:
        """Server shutdown: end every connection and give their turns a bounded time to stop and save."""
        for connection in list(self.connections.values()):
            connection.close("the server is shutting down")
        with anyio.move_on_after(self.options.shutdown_timeout):
            for connection in list(self.connections.values()):
                await connection.ended.wait()
