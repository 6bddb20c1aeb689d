"""One tool of an MCP server, offered to the model as a coder-agent `Tool`.

The server's own input schema is what the model is offered, and the server validates the arguments: `parse`
accepts any JSON object. Read-only tools (`readOnlyHint`) read freely; any other call is an "execute" that the
permission gate asks about and remembers per tool.

Imports `mcp_types`: load it only through `coder_agent.mcp.connection` (off the event loop).
"""

from __future__ import annotations

import copy
from typing import Any, Protocol, cast

import mcp_types as mcp
from pydantic import Field

from ..agent.tools.base import Intent, Tool, ToolArgs, ToolContext, ToolError, ToolResult, text_content
from .elicitation import Asker
from .results import convert


class ToolCaller(Protocol):
    """What a tool needs of its server's connection (`connection.Connection`)."""

    name: str

    async def call(self, tool: str, arguments: dict[str, Any], asker: Asker | None = None) -> mcp.CallToolResult: ...


class McpArgs(ToolArgs):
    arguments: dict[str, Any] = Field(default_factory=dict)


def display_title(tool: mcp.Tool) -> str:
    """MCP's display-name precedence for tools: `title`, then `annotations.title`, then `name`."""
    annotations_title = tool.annotations.title if tool.annotations is not None else None
    return tool.title or annotations_title or tool.name


def parameters(tool: mcp.Tool) -> dict[str, Any]:
    """The tool's input schema as function parameters (always an object with properties)."""
    schema = copy.deepcopy(tool.input_schema)
    schema.pop("$schema", None)
    schema.pop("title", None)
    schema["type"] = "object"
    schema.setdefault("properties", {})
    return schema


class McpTool(Tool[McpArgs]):
    """Base of the per-tool classes `make_tool` builds (`name` and `read_only` are class-level in the seam)."""

    args_model = McpArgs

    def __init__(self, connection: ToolCaller, remote: mcp.Tool) -> None:
        self._connection = connection
        self.remote = remote
        self._description = remote.description or display_title(remote)
        self._parameters = parameters(remote)
        self.title = f"{connection.name}: {display_title(remote)}"

    @property
    def description(self) -> str:  # from the server, not from prompts/
        return self._description

    def spec(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self._description, "parameters": self._parameters},
        }

    def parse(self, arguments: dict[str, Any]) -> McpArgs:
        return McpArgs(arguments=dict(arguments))

    async def prepare(self, args: McpArgs, ctx: ToolContext) -> Intent:
        if self.read_only:
            return Intent(title=self.title, kind="read", effect="read")
        return Intent(
            title=self.title, kind="other", effect="execute", mcp_tool=(self._connection.name, self.remote.name)
        )

    async def run(self, args: McpArgs, intent: Intent, ctx: ToolContext) -> ToolResult:
        asker = Asker(ctx)
        try:
            result = convert(await self._connection.call(self.remote.name, args.arguments, asker))
        except ToolError as exc:
            if not asker.notes:
                raise
            raise ToolError("\n".join([str(exc), *asker.notes])) from exc
        if asker.notes:  # what the server asked, and what came of it: for the model, and kept in the tool call
            asked = "\n".join(asker.notes)
            result.output = f"{result.output}\n\n{asked}".lstrip("\n")
            result.content = [*result.content, text_content(asked)]
        return result


def make_tool(connection: ToolCaller, remote: mcp.Tool, public_name: str) -> McpTool:
    """A `McpTool` for `remote`, named `public_name` (a subclass per tool: the seam's `name` is a class attribute)."""
    read_only = bool(remote.annotations is not None and remote.annotations.read_only_hint)
    namespace = {"name": public_name, "read_only": read_only, "kind": "read" if read_only else "other"}
    cls = cast("type[McpTool]", type(f"McpTool[{public_name}]", (McpTool,), namespace))
    return cls(connection, remote)
