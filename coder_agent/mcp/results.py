"""An MCP tool result as a coder-agent `ToolResult`: text for the model, ACP content blocks for the editor.

Imports `mcp_types`: load it only through `coder_agent.mcp.connection` (off the event loop).
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as mcp

from ..acp import schema as acp
from ..agent.tools.base import ToolResult, text_content

MAX_OUTPUT = 100_000  # characters of the model's output
MAX_EDITOR_TEXT = 100_000  # characters of each text block shown in the editor


def cap(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[output truncated: {len(text)} characters in all, showing the first {limit}]"


def _audiences(block: mcp.ContentBlock) -> tuple[bool, bool]:
    """Whether the block is meant for the model and for the user (both, unless its annotations say otherwise)."""
    audience = block.annotations.audience if block.annotations is not None else None
    if not audience:
        return True, True
    return "assistant" in audience, "user" in audience


def _describe(block: mcp.ContentBlock) -> str:
    """What the model reads for one block."""
    if isinstance(block, mcp.TextContent):
        return block.text
    if isinstance(block, mcp.ImageContent):
        return f"[image: {block.mime_type}]"
    if isinstance(block, mcp.AudioContent):
        return f"[audio: {block.mime_type}]"
    if isinstance(block, mcp.ResourceLink):
        return f"[resource link: {block.name} <{block.uri}>]"
    resource = block.resource
    if isinstance(resource, mcp.TextResourceContents):
        return f"[resource: {resource.uri}]\n{resource.text}"
    return f"[binary resource: {resource.uri} ({resource.mime_type or 'unknown type'})]"


def _to_acp(block: mcp.ContentBlock) -> acp.ContentBlock:
    """The same block as ACP content for the editor."""
    if isinstance(block, mcp.TextContent):
        return acp.TextContent(text=cap(block.text, MAX_EDITOR_TEXT))
    if isinstance(block, mcp.ImageContent):
        return acp.ImageContent(data=block.data, mime_type=block.mime_type)
    if isinstance(block, mcp.AudioContent):
        return acp.AudioContent(data=block.data, mime_type=block.mime_type)
    if isinstance(block, mcp.ResourceLink):
        return acp.ResourceLink(
            uri=block.uri,
            name=block.name,
            title=block.title,
            description=block.description,
            mime_type=block.mime_type,
            size=block.size,
        )
    resource = block.resource
    contents: acp.TextResourceContents | acp.BlobResourceContents
    if isinstance(resource, mcp.TextResourceContents):
        contents = acp.TextResourceContents(
            uri=resource.uri, text=cap(resource.text, MAX_EDITOR_TEXT), mime_type=resource.mime_type
        )
    else:
        contents = acp.BlobResourceContents(uri=resource.uri, blob=resource.blob, mime_type=resource.mime_type)
    return acp.EmbeddedResource(resource=contents)


def _as_json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, indent=2)
    except (TypeError, ValueError):
        return repr(value)


def convert(result: mcp.CallToolResult) -> ToolResult:
    parts: list[str] = []
    content: list[acp.ToolCallContent] = []
    has_text = False
    for block in result.content:
        for_model, for_user = _audiences(block)
        if for_model:
            parts.append(_describe(block))
            has_text = has_text or isinstance(block, mcp.TextContent)
        if for_user:
            content.append(acp.ContentToolCallContent(content=_to_acp(block)))
    structured = result.structured_content
    if structured is not None and not has_text:
        parts.append(_as_json(structured))
        if not content:
            content.append(text_content(cap(_as_json(structured), MAX_EDITOR_TEXT)))
    output = "\n".join(part for part in parts if part)
    if not output:
        output = "The tool failed without a message." if result.is_error else "The tool returned no output."
    return ToolResult(output=cap(output, MAX_OUTPUT), content=content, raw_output=structured, failed=result.is_error)
