"""One MCP server of a session: connecting, calling, reconnecting after a crash, stopping.

Each connection (an `Attempt`) lives in its own task, which enters and leaves the SDK's contexts: anyio's
cancel scopes must be exited by the task that entered them. Calls run in the callers' tasks. A call that finds
the connection dead or hung marks it broken; its task tears it down, and the next call starts a new one.

This module imports the mcp SDK (about 0.45 s): `McpServers` loads it in a worker thread, never at import.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.abc
import mcp_types as mcp
from mcp import ClientSession, MCPError

from ..acp.schema import ElicitationMode, McpServer
from ..agent.errors import AgentError
from ..agent.tool_source import SourcePrompt
from ..agent.tools.base import Tool, ToolError
from .attempt import Attempt
from .elicitation import Asker, ServerQuestions
from .errors import describe, is_connection_lost, is_failure, is_timeout
from .names import ToolNames, left_out
from .prompts import list_prompts, prompt_text, source_prompt
from .tool import McpTool, make_tool
from .transports import open_session

log = logging.getLogger(__name__)

CALL_GRACE = 5.0  # beyond call_timeout, a call is abandoned even if the SDK's own timeout has not fired
MAX_PAGES = 100  # of tools/list


async def list_tools(session: ClientSession) -> list[mcp.Tool]:
    capabilities = session.server_capabilities
    if capabilities is not None and capabilities.tools is None:
        return []
    tools: list[mcp.Tool] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        params = mcp.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


class Connection:
    def __init__(
        self,
        config: McpServer,
        *,
        index: int,
        names: ToolNames,
        prompt_names: ToolNames | None = None,
        connect_timeout: float,
        call_timeout: float,
        report: Callable[[str], Awaitable[None]],
        elicitation_modes: frozenset[ElicitationMode] = frozenset(),
    ) -> None:
        self.name = config.name
        self._questions = ServerQuestions(config.name, elicitation_modes)
        self._config = config
        self._index = index
        self._names = names
        self._prompt_names = prompt_names or ToolNames()
        self._connect_timeout = connect_timeout
        self._call_timeout = call_timeout
        self._report = report
        self.settled = anyio.Event()  # the first connection is up, or failed
        self._stopped = anyio.Event()
        self._stopping = False
        self._up = False
        self._tools: list[McpTool] = []
        self._prompts: dict[str, mcp.Prompt] = {}  # by public name
        self._current: Attempt | None = None
        self._task_group: anyio.abc.TaskGroup | None = None

    def tools(self) -> list[Tool[Any]]:
        return list(self._tools) if self._up and not self._stopping else []

    def prompts(self) -> list[SourcePrompt]:
        if not self._up or self._stopping:
            return []
        return [source_prompt(remote, name, self.name) for name, remote in self._prompts.items()]

    def has_prompt(self, public_name: str) -> bool:
        return public_name in self._prompts

    async def get_prompt(self, public_name: str, arguments: dict[str, str]) -> str:
        """The prompt's text; raises `AgentError` saying what went wrong."""
        remote = self._prompts[public_name]
        try:
            attempt = await self._connected()
        except ToolError as exc:
            raise AgentError(str(exc)) from exc
        assert attempt.session is not None
        try:
            with anyio.fail_after(self._call_timeout + CALL_GRACE):
                result = await attempt.session.get_prompt(remote.name, arguments)
        except MCPError as exc:
            raise AgentError(f"MCP server `{self.name}` refused the prompt {remote.name}: {describe(exc)}") from exc
        except Exception as exc:
            attempt.break_()
            raise AgentError(self._broken_message(exc)) from exc
        if not isinstance(result, mcp.GetPromptResult):
            raise AgentError(f"MCP server `{self.name}` asked for more input for the prompt {remote.name}")
        return prompt_text(result)

    async def run(self) -> None:
        """The owner: the first connection, then the task group every later connection runs in, until `stop`."""
        if self._stopping:
            self.settled.set()
            return
        try:
            async with anyio.create_task_group() as task_group:
                self._task_group = task_group
                attempt = await self._wait(self._begin())
                self._up = attempt.usable
                if not attempt.usable and not self._stopping:  # (a close while connecting is no failure)
                    self._stop_attempts()
                    await self._tell(left_out(self.name, attempt.error or "unknown error"))
                self.settled.set()
                if attempt.usable:
                    await self._stopped.wait()
        finally:
            self._stopping = True
            self._task_group = None
            self.settled.set()

    def stop(self) -> None:
        self._stopping = True
        self._stopped.set()
        self._stop_attempts()

    async def call(self, tool: str, arguments: dict[str, Any], asker: Asker | None = None) -> mcp.CallToolResult:
        """Call the tool; what the server asks meanwhile goes to `asker`'s user (declined without one)."""
        attempt = await self._connected()
        assert attempt.session is not None
        try:
            with self._questions.during(asker), anyio.fail_after(self._call_timeout + CALL_GRACE):
                return await attempt.session.call_tool(tool, arguments, read_timeout_seconds=self._call_timeout)
        except MCPError as exc:
            if not is_connection_lost(exc) and not is_timeout(exc):
                raise ToolError(f"MCP server `{self.name}` refused the call: {describe(exc)}") from exc
            attempt.break_()
            raise ToolError(self._broken_message(exc)) from exc
        except Exception as exc:  # transport failures (often ExceptionGroups), malformed results, our own timeout
            attempt.break_()
            raise ToolError(self._broken_message(exc)) from exc

    def _broken_message(self, exc: BaseException) -> str:
        if is_timeout(exc):
            what = f"did not answer within {self._call_timeout:g} s"
        else:
            what = f"failed during the call: {describe(exc)}"
        return f"MCP server `{self.name}` {what}; it will be restarted on the next call"

    async def _connected(self) -> Attempt:
        if self._stopping or self._task_group is None:
            raise ToolError(f"MCP server `{self.name}` is not running")
        attempt = self._current
        if attempt is None or attempt.finished:
            attempt = self._begin()
        attempt = await self._wait(attempt)
        if not attempt.usable:
            raise ToolError(f"MCP server `{self.name}` could not be restarted: {attempt.error}")
        return attempt

    def _begin(self) -> Attempt:
        assert self._task_group is not None
        attempt = Attempt(deadline=anyio.current_time() + self._connect_timeout)
        self._current = attempt
        self._task_group.start_soon(self._lifetime, attempt, name=f"mcp server {self.name}")
        return attempt

    async def _wait(self, attempt: Attempt) -> Attempt:
        """Until the attempt is up or failed; at its deadline it fails, even while its task still tears down."""
        with anyio.CancelScope(deadline=attempt.deadline):
            await attempt.done.wait()
        attempt.fail(f"it did not answer within {self._connect_timeout:g} s")
        return attempt

    async def _lifetime(self, attempt: Attempt) -> None:
        """One connection, from connect to teardown, entered and left in this task."""
        try:
            with attempt.scope as scope:
                opened = open_session(self._config, self._call_timeout, attempt.lost, self._questions)
                async with opened as session:
                    await session.initialize()
                    listed = await list_tools(session)
                    prompts = await list_prompts(session)
                    scope.deadline = math.inf
                    if attempt.succeed(session):
                        self._adopt(listed, prompts)
                        await attempt.leave.wait()
            if scope.cancelled_caught:
                attempt.fail(
                    "it was stopped" if self._stopping else f"it did not answer within {self._connect_timeout:g} s"
                )
        except BaseException as exc:  # a failure (even mixed with a cancellation) must not reach the task groups
            if not is_failure(exc):
                raise
            log.info("MCP server %s: %s", self.name, describe(exc), exc_info=True)
            attempt.fail(describe(exc))
        finally:
            attempt.end()

    def _adopt(self, listed: list[mcp.Tool], prompts: list[mcp.Prompt]) -> None:
        self._tools = [
            make_tool(self, remote, self._names.name(self._index, self.name, remote.name)) for remote in listed
        ]
        self._prompts = {self._prompt_names.name(self._index, self.name, remote.name): remote for remote in prompts}

    def _stop_attempts(self) -> None:
        if self._current is not None:
            self._current.stop()

    async def _tell(self, message: str) -> None:
        log.warning("%s", message)
        try:
            await self._report(message)
        except Exception:
            log.exception("reporting an MCP server failure failed")
