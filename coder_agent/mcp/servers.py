"""The MCP servers of one session, and their tools for the model.

`run` is a long-lived task: it loads the mcp SDK in a worker thread (importing it blocks for about 0.45 s, so
it is never imported on the event loop, nor by importing this package), then gives every server a task of its
own. A server that cannot start within `connect_timeout` is reported once and left out; the others work.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

import anyio
import anyio.abc

from ..acp.schema import ElicitationMode, McpServer
from ..agent.errors import AgentError
from ..agent.tool_source import SourcePrompt
from .names import ToolNames, left_out

if TYPE_CHECKING:
    from ..agent.tools.base import Tool
    from .connection import Connection

log = logging.getLogger(__name__)

CLOSE_TIMEOUT = 10.0  # for the servers to stop; the SDK gives a stdio server 2 s, then SIGTERM, then SIGKILL


async def _load_connection_class() -> type[Connection]:
    # Abandoned on cancel: a session closed (or an agent exiting) while the SDK loads does not wait for it.
    module = await anyio.to_thread.run_sync(
        importlib.import_module, f"{__package__}.connection", abandon_on_cancel=True
    )
    return cast("type[Connection]", module.Connection)


class McpServers:
    def __init__(
        self,
        servers: Sequence[McpServer],
        *,
        connect_timeout: float = 30.0,
        call_timeout: float = 120.0,
        report: Callable[[str], Awaitable[None]],
        on_ready: Callable[[], Awaitable[None]] | None = None,
        elicitation_modes: frozenset[ElicitationMode] = frozenset(),
    ) -> None:
        """`report`: tell the user about a server that could not start. `on_ready`: called once every server
        has come up or failed (its prompts are known then). `elicitation_modes`: the modes the editor offers, in
        which the servers may ask the user (`elicitation.py`)."""
        self._elicitation_modes = elicitation_modes
        self._configs = list(servers)
        self._on_ready = on_ready
        self._prompt_names = ToolNames()
        self._connect_timeout = connect_timeout
        self._call_timeout = call_timeout
        self._report = report
        self._names = ToolNames()
        self._connections: list[Connection] = []
        self._loaded = anyio.Event()  # the connections exist (or never will)
        self._closed = anyio.Event()
        self._finished = anyio.Event()
        self._running = False
        self._task_group: anyio.abc.TaskGroup | None = None

    async def run(self) -> None:
        """Connect every server, each in its own task; returns after `close()` (or when cancelled)."""
        if self._closed.is_set() or self._running:
            return
        self._running = True
        try:
            if self._configs:
                await self._start_all()
            await self._closed.wait()
        finally:
            self._loaded.set()
            self._finished.set()

    async def _start_all(self) -> None:
        try:
            connection_class = await _load_connection_class()
        except Exception as exc:
            log.exception("the mcp SDK failed to load")
            for config in self._configs:
                await self._tell(left_out(config.name, f"the MCP client failed to load ({exc})"))
            return
        if self._closed.is_set():
            return
        self._connections = [
            connection_class(
                config,
                index=index,
                names=self._names,
                prompt_names=self._prompt_names,
                connect_timeout=self._connect_timeout,
                call_timeout=self._call_timeout,
                report=self._report,
                elicitation_modes=self._elicitation_modes,
            )
            for index, config in enumerate(self._configs)
        ]
        self._loaded.set()
        async with anyio.create_task_group() as task_group:
            self._task_group = task_group
            for connection in self._connections:
                task_group.start_soon(self._run_one, connection, name=f"mcp server {connection.name}")
            if self._on_ready is not None:
                task_group.start_soon(self._when_ready, self._on_ready)
        self._task_group = None

    async def _when_ready(self, on_ready: Callable[[], Awaitable[None]]) -> None:
        for connection in self._connections:
            await connection.settled.wait()
        try:
            await on_ready()
        except Exception:
            log.exception("telling the session that its MCP servers are ready failed")

    @staticmethod
    async def _run_one(connection: Connection) -> None:
        try:
            await connection.run()
        except Exception:  # a bug of ours must not end the session's other tasks
            log.exception("MCP server %s stopped unexpectedly", connection.name)

    async def wait_ready(self, timeout: float) -> None:
        """Wait (at most `timeout` seconds) for the servers still connecting; never raises on timeout."""
        with anyio.move_on_after(timeout):
            await self._loaded.wait()
            for connection in self._connections:
                await connection.settled.wait()

    def tools(self) -> list[Tool[Any]]:
        """The tools of the servers that are up, named `mcp__<server>__<tool>`."""
        return [tool for connection in self._connections for tool in connection.tools()]

    def prompts(self) -> list[SourcePrompt]:
        """The prompts of the servers that are up, named `mcp__<server>__<prompt>` as their tools are."""
        return [prompt for connection in self._connections for prompt in connection.prompts()]

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> str:
        connection = next((c for c in self._connections if c.has_prompt(name)), None)
        if connection is None:
            raise AgentError(f"No MCP server of this session offers the prompt {name} (any more)")
        return await connection.get_prompt(name, arguments)

    async def close(self) -> None:
        """Stop every server (bounded): stdio children are terminated."""
        self._closed.set()
        for connection in self._connections:
            connection.stop()
        if not self._running:
            return
        with anyio.CancelScope(shield=True):
            with anyio.move_on_after(CLOSE_TIMEOUT):
                await self._finished.wait()
            if not self._finished.is_set() and self._task_group is not None:
                self._task_group.cancel_scope.cancel()
                with anyio.move_on_after(CLOSE_TIMEOUT):
                    await self._finished.wait()

    async def _tell(self, message: str) -> None:
        try:
            await self._report(message)
        except Exception:
            log.exception("reporting an MCP server failure failed")
