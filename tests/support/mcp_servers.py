"""Helpers for the MCP tests: server configs, a running `McpServers`, calling a tool, finding processes."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio

from coder_agent.acp.schema import EnvVariable, McpServerHttp, McpServerSse, McpServerStdio
from coder_agent.acp.schema.session import HttpHeader
from coder_agent.agent.tools.base import Intent, Tool, ToolContext, ToolResult
from coder_agent.mcp import McpServers

SERVERS = str(Path(__file__).with_name("mcp_server_script.py"))


def new_tag() -> str:
    return f"mcp-test-{uuid.uuid4().hex[:12]}"


def stdio(name: str, tag: str, mode: str = "stdio", env: dict[str, str] | None = None) -> McpServerStdio:
    variables = [EnvVariable(name=key, value=value) for key, value in (env or {}).items()]
    return McpServerStdio(name=name, command=sys.executable, args=[SERVERS, mode, "--tag", tag], env=variables)


def http(name: str, url: str, headers: dict[str, str] | None = None) -> McpServerHttp:
    return McpServerHttp(type="http", name=name, url=url, headers=_headers(headers))


def sse(name: str, url: str, headers: dict[str, str] | None = None) -> McpServerSse:
    return McpServerSse(type="sse", name=name, url=url, headers=_headers(headers))


def _headers(headers: dict[str, str] | None) -> list[HttpHeader]:
    return [HttpHeader(name=key, value=value) for key, value in (headers or {}).items()]


def processes_with(tag: str) -> list[int]:
    """Live processes whose command line carries `tag` (zombies have an empty cmdline)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if tag.encode() in cmdline:
            found.append(int(entry))
    return found


@asynccontextmanager
async def running(servers: list[Any], *, ready: float = 40.0, **options: Any) -> AsyncIterator[Running]:
    """`McpServers` running in a task group, first connections settled; closed (bounded) on the way out."""
    reports: list[str] = []

    async def report(message: str) -> None:
        reports.append(message)

    mcp = McpServers(servers, report=report, **options)
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(mcp.run)
        try:
            await mcp.wait_ready(ready)
            yield Running(mcp, reports)
        finally:
            with anyio.fail_after(30):
                await mcp.close()


class Running:
    def __init__(self, mcp: McpServers, reports: list[str]) -> None:
        self.mcp = mcp
        self.reports = reports

    def tool(self, name: str) -> Tool[Any]:
        tools = {tool.name: tool for tool in self.mcp.tools()}
        assert name in tools, f"{name} not in {sorted(tools)}"
        return tools[name]

    async def call(self, name: str, /, **arguments: Any) -> ToolResult:
        result, _ = await self.call_with_intent(name, **arguments)
        return result

    async def call_with_intent(self, name: str, /, **arguments: Any) -> tuple[ToolResult, Intent]:
        tool = self.tool(name)
        args = tool.parse(arguments)
        intent = await tool.prepare(args, CONTEXT)
        return await tool.run(args, intent, CONTEXT), intent


async def _ignore(*_: Any) -> None:
    return None


# MCP tools use nothing from the context.
CONTEXT = ToolContext("session", "/tmp", ["/tmp"], client=None, files=None, emit=_ignore, progress=_ignore)  # type: ignore[arg-type]


@contextmanager
def http_server(mode: str, tag: str) -> Iterator[str]:
    """The test server over streamable HTTP (`http`) or SSE (`sse`) as a subprocess; yields its URL."""
    process = subprocess.Popen([sys.executable, SERVERS, mode, "--tag", tag], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        readable, _, _ = select.select([process.stdout], [], [], 20)
        assert readable, "the test server did not start listening within 20 s"
        port = int(process.stdout.readline())
        yield f"http://127.0.0.1:{port}/{'mcp' if mode == 'http' else 'sse'}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
