"""The base protocol of LSP on stdio: JSON-RPC messages, each after a `Content-Length` header and a blank line."""

from __future__ import annotations

import json
from typing import Any

from anyio import DelimiterNotFound
from anyio.streams.buffered import BufferedByteReceiveStream

MAX_HEADER = 4096
MAX_MESSAGE = 64 * 1024 * 1024  # a project's worth of diagnostics fits; a server that sends more is broken


class FramingError(Exception):
    """What the server sent is not a message: the connection cannot go on."""


def encode(message: dict[str, Any]) -> bytes:
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def read_message(stream: BufferedByteReceiveStream) -> dict[str, Any]:
    """The next message; `anyio.IncompleteRead` (or `EndOfStream`) when the server closed its output."""
    try:
        header = await stream.receive_until(b"\r\n\r\n", MAX_HEADER)
    except DelimiterNotFound as exc:
        raise FramingError(f"a header longer than {MAX_HEADER} bytes") from exc
    length = None
    for line in header.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                raise FramingError(f"a bad Content-Length: {value.strip()[:40]!r}") from None
    if length is None or length < 0:
        raise FramingError("a message without a Content-Length")
    if length > MAX_MESSAGE:
        raise FramingError(f"a message of {length} bytes (the most taken is {MAX_MESSAGE})")
    body = await stream.receive_exactly(length)
    try:
        message = json.loads(body)
    except ValueError as exc:
        raise FramingError(f"a message that is not JSON: {exc}") from None
    if not isinstance(message, dict):
        raise FramingError("a message that is not a JSON object")
    return message
