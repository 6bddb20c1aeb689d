"""Opening a session's MCP server over the transport its ACP config names: stdio, streamable HTTP or SSE.

Imports the mcp SDK: load it only through `coder_agent.mcp.connection` (off the event loop).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import httpx2
import mcp_types as mcp
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client._transport import TransportStreams
from mcp.client.sse import sse_client
from mcp.client.stdio import get_default_environment
from mcp.client.streamable_http import streamable_http_client

from ..acp.schema import McpServer, McpServerHttp, McpServerSse, McpServerStdio
from .elicitation import ServerQuestions
from .streams import WatchedReadStream

HTTP_TIMEOUT = 30.0  # connect, write and pool timeouts of HTTP servers
MIN_READ_TIMEOUT = 300.0  # a response stream may stay quiet this long


def stdio_parameters(config: McpServerStdio) -> StdioServerParameters:
    # The SDK starts the server with a filtered environment (HOME, LOGNAME, PATH, SHELL, TERM, USER) plus the
    # server's own configured variables: none of the agent's credentials reach it (tests/mcp check this).
    env = get_default_environment() | {variable.name: variable.value for variable in config.env}
    return StdioServerParameters(command=config.command, args=list(config.args), env=env)


def describe_target(config: McpServer) -> str:
    if isinstance(config, McpServerHttp | McpServerSse):
        return config.url
    return " ".join([config.command, *config.args])


@asynccontextmanager
async def open_transport(config: McpServer, call_timeout: float) -> AsyncIterator[TransportStreams]:
    """The server's message streams; enter and exit this in one task (the SDK's cancel scopes require it)."""
    read_timeout = max(MIN_READ_TIMEOUT, call_timeout + HTTP_TIMEOUT)
    async with AsyncExitStack() as stack:
        if isinstance(config, McpServerHttp):
            headers = {header.name: header.value for header in config.headers}
            timeout = httpx2.Timeout(HTTP_TIMEOUT, read=read_timeout)
            client = await stack.enter_async_context(httpx2.AsyncClient(headers=headers, timeout=timeout))
            streams = await stack.enter_async_context(streamable_http_client(config.url, http_client=client))
        elif isinstance(config, McpServerSse):
            headers = {header.name: header.value for header in config.headers}
            streams = await stack.enter_async_context(
                sse_client(config.url, headers=headers, timeout=HTTP_TIMEOUT, sse_read_timeout=read_timeout)
            )
        else:
            streams = await stack.enter_async_context(stdio_client(stdio_parameters(config), errlog=sys.stderr))
        yield streams


class _Session(ClientSession):
    """A `ClientSession` that offers the server elicitation only in the modes the editor offers: given a callback,
    the SDK always offers both (form and URL), and a server would ask in a mode nobody can answer."""

    def __init__(self, *args: Any, questions: ServerQuestions, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._questions = questions

    def _build_capabilities(self, version: str) -> mcp.ClientCapabilities:
        capabilities = super()._build_capabilities(version)
        return capabilities.model_copy(update={"elicitation": self._questions.capability()})


@asynccontextmanager
async def open_session(
    config: McpServer, call_timeout: float, on_closed: Callable[[], None], questions: ServerQuestions
) -> AsyncIterator[ClientSession]:
    """A `ClientSession` over the server's transport, not yet initialised; `on_closed` when the server hangs up;
    the server's questions go to `questions`. None are invited when the editor offers no elicitation, but a
    server that asks anyway is answered (declined, and the tool call says so) rather than refused with an error."""
    async with (
        open_transport(config, call_timeout) as (read, write),
        _Session(
            WatchedReadStream(read, on_closed),
            write,
            elicitation_callback=questions.elicit,
            message_handler=questions.on_message,
            questions=questions,
        ) as session,
    ):
        yield session
