"""Images kept once: a prompt's image is stored as a blob, and the update log and the history refer to it.

A pasted screenshot is hundreds of kilobytes of base64. Its prompt block is kept in the update log (for
replay) and in the model's history; both hold a reference (`coder-agent-blob:<sha256>`) instead of the data,
which the store keeps once per session, under its hash. Reading a log back puts the data in again.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable

from ...acp.schema import ImageContent, SessionUpdate, UserMessageChunk
from ...llm.messages import ChatMessage, ImagePart, UserMessage

PREFIX = "coder-agent-blob:"
MARK = PREFIX.encode()
_REFERENCE = re.compile(rb'"coder-agent-blob:([0-9a-f]{64})"')

Keep = Callable[[str, str], None]  # (key, data): store the data under the key
Lookup = Callable[[str], str | None]  # key -> data, None when it is gone


def _reference(data: str, keep: Keep) -> str:
    key = hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()
    keep(key, data)
    return PREFIX + key


def stored_update(update: SessionUpdate, keep: Keep) -> SessionUpdate:
    """The update as stored: a prompt's image refers to its blob."""
    content = update.content if isinstance(update, UserMessageChunk) else None
    if not isinstance(content, ImageContent) or content.data.startswith(PREFIX):
        return update
    image = content.model_copy(update={"data": _reference(content.data, keep)})
    return update.model_copy(update={"content": image})


def stored_message(message: ChatMessage, keep: Keep) -> ChatMessage:
    """The message as stored: its images refer to their blobs."""
    if not isinstance(message, UserMessage) or not any(isinstance(part, ImagePart) for part in message.parts):
        return message
    parts = [
        part.model_copy(update={"data": _reference(part.data, keep)})
        if isinstance(part, ImagePart) and not part.data.startswith(PREFIX)
        else part
        for part in message.parts
    ]
    return message.model_copy(update={"parts": parts})


def expand(body: bytes, lookup: Lookup) -> bytes:
    """A stored update or message with its blobs' data back in place (a blob that is gone: empty data)."""
    if MARK not in body:
        return body

    def data(match: re.Match[bytes]) -> bytes:
        return json.dumps(lookup(match.group(1).decode()) or "").encode()

    return _REFERENCE.sub(data, body)
