"""The server: uvicorn serving the app on given sockets, beside the connections' agents, in one task group."""

from __future__ import annotations

import contextlib
import logging
import socket
from collections.abc import Callable, Generator, Iterable

import anyio
import uvicorn

from ..config.settings import Settings
from .admission import Admission
from .app import build_app
from .budget import InboundBudget
from .connection import RemoteConnection
from .hub import Hub
from .options import ServeOptions
from .protocols import guarded_protocols
from .security import Gate

log = logging.getLogger(__name__)


class _Uvicorn(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, hub: Hub, signals: bool) -> None:
        super().__init__(config)
        self._hub = hub
        self._signals = signals

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        if self._signals:
            with super().capture_signals():
                yield
        else:
            yield

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        # Stop taking connections, then end the open ones: their streams end, so uvicorn need not wait on them.
        for server in self.servers:
            server.close()
        self._hub.accepting = False
        await self._hub.close_all()
        await super().shutdown(sockets)


class RemoteServer:
    """`serve(sockets)` runs until `stop()` (or a signal, with `signals=True`)."""

    def __init__(
        self,
        settings: Settings,
        token: str,
        origins: Iterable[str] = (),
        options: ServeOptions | None = None,
        *,
        signals: bool = False,
    ) -> None:
        self.settings = settings
        self.options = options or ServeOptions()
        self._gate = Gate(token, [*settings.serve_origins, *origins])
        self._signals = signals
        self._uvicorn: _Uvicorn | None = None
        self.hub: Hub | None = None
        self.on_connection: Callable[[RemoteConnection], None] | None = None  # tests and benchmarks look in

    async def serve(self, sockets: list[socket.socket]) -> None:
        options = self.options
        async with anyio.create_task_group() as group:
            budget = InboundBudget(options.max_inbound_bytes, options.inbound_wait)
            admission = Admission(options.max_unauthenticated, options.max_unauthenticated_per_peer)
            self.hub = Hub(self.settings, options, group, budget, admission)
            self.hub.on_connection = self.on_connection
            http, websocket = guarded_protocols(admission, options.header_timeout, budget)
            config = uvicorn.Config(
                build_app(self.hub, self._gate),
                http=http,
                ws=websocket,
                lifespan="off",
                log_config=None,
                access_log=False,
                ws_max_size=options.max_message_bytes,
                # A compressed frame's size says nothing of its message's: it could not be counted before it is read.
                ws_per_message_deflate=False,
                timeout_graceful_shutdown=5,
            )
            self._uvicorn = _Uvicorn(config, self.hub, self._signals)
            await self._uvicorn.serve(sockets=sockets)
            group.cancel_scope.cancel()

    def stop(self) -> None:
        if self._uvicorn is not None:
            self._uvicorn.should_exit = True
