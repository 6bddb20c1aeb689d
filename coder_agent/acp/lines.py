"""Splitting a byte stream into lines, with a cap on a line's length."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import anyio.abc

_CHUNK = 256 * 1024


class LineTooLong:
    """Stands in for a line that was longer than the cap; its bytes were discarded."""

    def __init__(self, size: int, limit: int) -> None:
        self.size = size
        self.limit = limit

    def __str__(self) -> str:
        return f"message of {self.size} bytes exceeds the limit of {self.limit} bytes"


async def read_lines(stream: anyio.abc.ByteReceiveStream, max_bytes: int) -> AsyncIterator[bytes | LineTooLong]:
    """Yield each non-empty line without its `\\n` (or `\\r\\n`).

    A line longer than `max_bytes` is dropped as it streams in (memory stays bounded) and reported as one
    `LineTooLong`. A final line cut off by the end of the stream is yielded too, so the caller can tell
    the peer it could not be parsed.
    """
    buffer = bytearray()
    discarding = 0  # bytes dropped so far of an over-long line
    while True:
        try:
            chunk = await stream.receive(_CHUNK)
        except anyio.EndOfStream:
            break
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            if newline < 0:
                break
            piece = chunk[start:newline]
            start = newline + 1
            if discarding:
                yield LineTooLong(discarding + len(piece), max_bytes)
                discarding = 0
                continue
            if buffer:
                buffer += piece
                line = bytes(buffer)
                buffer.clear()
            else:
                line = piece
            if len(line) > max_bytes:
                yield LineTooLong(len(line), max_bytes)
                continue
            line = line.rstrip(b"\r")
            if line.strip():
                yield line
        rest = chunk[start:]
        chunk = piece = line = b""  # not kept while the next chunk is awaited: a line may be megabytes
        if discarding:
            discarding += len(rest)
        elif len(buffer) + len(rest) > max_bytes:
            discarding = len(buffer) + len(rest)
            buffer.clear()
        else:
            buffer += rest
    if discarding:
        yield LineTooLong(discarding, max_bytes)
    elif bytes(buffer).strip():
        yield bytes(buffer)


class PrefixedStream(anyio.abc.ByteReceiveStream):
    """A receive stream that first gives back bytes already read from it by someone else.

    `ended`: that reader already saw the end of the input, so nothing more is read (a terminal's Ctrl-D is
    not sticky: reading again would wait for a second one).
    """

    def __init__(self, prefix: bytes, inner: anyio.abc.ByteReceiveStream, ended: bool = False) -> None:
        self._prefix = prefix
        self._inner = inner
        self._ended = ended

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if self._prefix:
            data, self._prefix = self._prefix[:max_bytes], self._prefix[max_bytes:]
            return data
        if self._ended:
            raise anyio.EndOfStream
        return await self._inner.receive(max_bytes)

    async def aclose(self) -> None:
        await self._inner.aclose()
