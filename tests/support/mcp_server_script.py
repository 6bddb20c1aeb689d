"""A real MCP server (mcp SDK `MCPServer`) for the tests, run as a script.

    python tests/support/mcp_server_script.py stdio [--tag T]   # over stdin/stdout
    python tests/support/mcp_server_script.py http [--tag T]    # streamable HTTP on 127.0.0.1, /mcp
    python tests/support/mcp_server_script.py sse [--tag T]     # legacy SSE on 127.0.0.1, /sse
    python tests/support/mcp_server_script.py paged [--tag T]   # low-level server: tools/list in 3 pages, odd names

The HTTP modes bind a free port first and print it on stdout once the socket listens. `--tag` is ignored: the
tests put a unique one on every command line to find their processes in /proc.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import socket
from typing import Any, TypedDict

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from mcp.server.stdio import stdio_server
from pydantic import BaseModel, Field

# The smallest valid PNG (1x1, transparent).
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)

app = MCPServer("test-server", log_level="WARNING")


class Sum(TypedDict):
    total: int
    terms: list[int]


@app.tool(annotations=types.ToolAnnotations(title="Add numbers", read_only_hint=True))
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@app.tool(structured_output=False)
def echo_image(caption: str) -> list[Any]:
    """Return a caption and a tiny image."""
    return [caption, Image(data=PIXEL, format="png")]


@app.tool()
def fail(message: str) -> str:
    """Always fails with the given message."""
    raise ToolError(message)


@app.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    await anyio.sleep(seconds)
    return f"slept {seconds}"


@app.tool()
def die() -> str:
    """Exit the server process in the middle of the call."""
    os._exit(3)


@app.tool(annotations=types.ToolAnnotations(read_only_hint=True))
def structured(terms: list[int]) -> Sum:
    """Sum a list, answering with structured content."""
    return {"total": sum(terms), "terms": terms}


@app.tool(name="resources.demo")
def resources() -> list[types.ContentBlock]:
    """An embedded text resource and a resource link."""
    text = types.TextResourceContents(uri="file:///notes.txt", text="note body", mime_type="text/plain")
    link = types.ResourceLink(uri="file:///big.log", name="big.log", mime_type="text/plain")
    return [types.EmbeddedResource(resource=text), link]


@app.tool()
def big(size: int) -> str:
    """A long answer."""
    return "x" * size


@app.tool(annotations=types.ToolAnnotations(read_only_hint=True))
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@app.tool()
def get_env(name: str) -> str:
    """The value of an environment variable of the server process."""
    return os.environ.get(name, "<unset>")


@app.tool()
def get_header(name: str, ctx: Context) -> str:
    """The value of a header of the HTTP request carrying this call."""
    headers = ctx.headers or {}
    return headers.get(name.lower(), "<unset>")


class Visitor(BaseModel):
    name: str = Field(description="Your name")
    tea: bool = Field(default=False, description="Tea?")


@app.tool()
async def greet(ctx: Context) -> str:
    """Ask the user's name (an MCP form elicitation), then greet them."""
    answer = await ctx.elicit("What is your name?", schema=Visitor)
    if answer.action == "accept":
        return f"Hello, {answer.data.name}" + (" (tea)" if answer.data.tea else "")
    return f"No name: {answer.action}"


@app.tool()
async def stubborn_greet(ctx: Context) -> str:
    """As greet, but its question outlives a cancelled call (a server that does not pass the cancel on)."""
    with anyio.CancelScope(shield=True):
        answer = await ctx.elicit("What is your name?", schema=Visitor)
    return f"Answer: {answer.action}"


@app.tool()
async def sign_in(ctx: Context) -> str:
    """Send the user to a sign-in page (an MCP URL elicitation); when they agree, say the step is done."""
    answer = await ctx.elicit_url("Sign in to Example", "https://auth.example.com/login?state=1", "login-1")
    if answer.action != "accept":
        return f"Not signed in: {answer.action}"
    await ctx.request_context.session.send_elicit_complete("login-1")
    return "Signed in"


@app.tool(annotations=types.ToolAnnotations(read_only_hint=True))
def elicitation_offered(ctx: Context) -> str:
    """The elicitation modes the client offered this server, as JSON (null: none)."""
    offered = ctx.request_context.session.client_capabilities
    elicitation = offered.elicitation if offered is not None else None
    return json.dumps(elicitation.model_dump(exclude_none=True) if elicitation is not None else None)


@app.tool()
async def nested_form(ctx: Context) -> str:
    """Ask with a form ACP cannot show (a nested object)."""
    schema = {"type": "object", "properties": {"address": {"type": "object", "properties": {}}}}
    answer = await ctx.request_context.session.elicit_form("Where do you live?", schema)
    return f"Address: {answer.action}"


@app.prompt(title="Explain a file")
def explain(path: str, depth: str = "short") -> str:
    """Explain one file of the project."""
    return f"Explain {path} ({depth} version)."


PAGED_NAMES = [["first.tool", "second tool"], ["x" * 80], ["last/tool"]]


def serve_paged() -> None:
    """Three pages of tools whose names need sanitising; each call answers with the tool's name."""

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        page = int(params.cursor) if params is not None and params.cursor else 0
        tools = [types.Tool(name=name, input_schema={"type": "object"}) for name in PAGED_NAMES[page]]
        next_cursor = str(page + 1) if page + 1 < len(PAGED_NAMES) else None
        return types.ListToolsResult(tools=tools, next_cursor=next_cursor)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(text=f"called {params.name}")])

    server: Server[Any] = Server("paged", on_list_tools=list_tools, on_call_tool=call_tool)

    async def serve() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(serve)


def serve_http(mode: str) -> None:
    import uvicorn

    starlette_app = app.streamable_http_app() if mode == "http" else app.sse_app()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    print(sock.getsockname()[1], flush=True)
    server = uvicorn.Server(uvicorn.Config(starlette_app, log_level="warning", lifespan="on"))
    anyio.run(lambda: server.serve(sockets=[sock]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["stdio", "http", "sse", "paged"])
    parser.add_argument("--tag", default="")
    mode = parser.parse_args().mode
    if mode == "stdio":
        app.run()
    elif mode == "paged":
        serve_paged()
    else:
        serve_http(mode)


if __name__ == "__main__":
    main()
