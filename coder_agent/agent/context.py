"""A prompt's content blocks -> the user message the model sees."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import unquote, urlparse

import anyio

from ..acp.errors import RequestError
from ..acp.schema import (
    AudioContent,
    BlobResourceContents,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
)
from ..llm.messages import ImagePart, TextPart, UserMessage, UserPart
from .client import Client

log = logging.getLogger(__name__)

MAX_LINKED_FILE_BYTES = 256 * 1024


def file_path_of(uri: str) -> str | None:
    """The absolute local path of a `file://` URI, else None."""
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        path = unquote(parsed.path)
        return path if Path(path).is_absolute() else None
    if not parsed.scheme and Path(uri).is_absolute():
        return uri
    return None


def _framed(uri: str, text: str) -> str:
    return f'<context uri="{uri}">\n{text}\n</context>'


async def _read_linked_file(client: Client, session_id: str, path: str) -> str:
    """Read a linked file through the editor when it offers to, else from disk. Never a binary dump."""
    if client.capabilities.fs.read_text_file:
        try:
            return await client.read_text_file(session_id, path)
        except RequestError as exc:
            log.info("client could not read %s (%s); trying the disk", path, exc.message)
    target = anyio.Path(path)
    try:
        data = await target.read_bytes() if (await target.stat()).st_size <= MAX_LINKED_FILE_BYTES else None
    except OSError as exc:
        raise FileNotFoundError(f"{path}: {exc.strerror or exc}") from exc
    if data is None:
        raise ValueError(f"{path} is larger than {MAX_LINKED_FILE_BYTES // 1024} KiB; read it with a tool")
    if b"\0" in data[:8192]:
        raise ValueError(f"{path} is a binary file")
    return data.decode("utf-8", errors="replace")


async def _link_part(client: Client, session_id: str, block: ResourceLink) -> TextPart:
    path = file_path_of(block.uri)
    if path is None:
        return TextPart(text=f"[linked resource: {block.name} <{block.uri}>]")
    try:
        text = await _read_linked_file(client, session_id, path)
    except (OSError, ValueError) as exc:
        return TextPart(text=f"[linked file {path} could not be included: {exc}]")
    return TextPart(text=_framed(block.uri, text))


async def user_message_from_prompt(blocks: Sequence[ContentBlock], client: Client, session_id: str) -> UserMessage:
    parts: list[UserPart] = []
    for block in blocks:
        if isinstance(block, TextContent):
            parts.append(TextPart(text=block.text))
        elif isinstance(block, ResourceLink):
            parts.append(await _link_part(client, session_id, block))
        elif isinstance(block, EmbeddedResource):
            resource = block.resource
            if isinstance(resource, BlobResourceContents):
                mime = resource.mime_type or "application/octet-stream"
                parts.append(TextPart(text=f"[binary resource {resource.uri} ({mime}) not shown]"))
            else:
                parts.append(TextPart(text=_framed(resource.uri, resource.text)))
        elif isinstance(block, ImageContent):
            parts.append(ImagePart(data=block.data, mime_type=block.mime_type))
        elif isinstance(block, AudioContent):
            parts.append(TextPart(text=f"[audio clip ({block.mime_type}) not supported; ignored]"))
    if not parts:
        raise RequestError.invalid_params("Invalid params for session/prompt: prompt is empty")
    return UserMessage(parts=parts)
