"""An MCP server's prompts (`prompts/list`, `prompts/get`), offered to the user as slash commands.

Imports the mcp SDK: load it only through `coder_agent.mcp.connection` (off the event loop).
"""

from __future__ import annotations

import mcp_types as mcp
from mcp import ClientSession

from ..agent.tool_source import PromptArgument, SourcePrompt
from .results import _describe

MAX_PAGES = 100


async def list_prompts(session: ClientSession) -> list[mcp.Prompt]:
    capabilities = session.server_capabilities
    if capabilities is None or capabilities.prompts is None:
        return []
    prompts: list[mcp.Prompt] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        params = mcp.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_prompts(params=params)
        prompts.extend(page.prompts)
        cursor = page.next_cursor
        if not cursor:
            break
    return prompts


def source_prompt(remote: mcp.Prompt, public_name: str, server: str) -> SourcePrompt:
    arguments = tuple(
        PromptArgument(arg.name, arg.description or "", bool(arg.required)) for arg in remote.arguments or []
    )
    description = remote.description or remote.title or remote.name
    return SourcePrompt(public_name, f"{description} (MCP server {server})", arguments)


def prompt_text(result: mcp.GetPromptResult) -> str:
    """The prompt's messages as the text of one user prompt."""
    return "\n\n".join(_describe(message.content) for message in result.messages).strip()
