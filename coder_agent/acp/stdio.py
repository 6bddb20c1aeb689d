"""The stdio transport: stdin and a private duplicate of stdout as anyio byte streams.

The protocol writes to the private copy of fd 1 that `prestart.early.reserve_stdout()` made at start-up.
"""

from __future__ import annotations

import asyncio
import os
import selectors
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import anyio.abc


def _is_pollable(fd: int, events: int = selectors.EVENT_READ) -> bool:
    """Whether the event loop can wait on `fd`: pipes, sockets, terminals; not files, nor /dev/null (epoll says no)."""
    mode = os.fstat(fd).st_mode
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)):
        return False
    selector = selectors.DefaultSelector()
    try:
        selector.register(fd, events)
    except (OSError, ValueError):
        return False
    finally:
        selector.close()
    return True


class _ReaderStream(anyio.abc.ByteReceiveStream):
    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    async def receive(self, max_bytes: int = 65536) -> bytes:
        data = await self._reader.read(max_bytes)
        if not data:
            raise anyio.EndOfStream
        return data

    async def aclose(self) -> None:
        pass


class _FileReaderStream(anyio.abc.ByteReceiveStream):
    """For stdin redirected from a regular file or /dev/null, which the event loop cannot poll."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    async def receive(self, max_bytes: int = 65536) -> bytes:
        data = await anyio.to_thread.run_sync(os.read, self._fd, max_bytes, abandon_on_cancel=True)
        if not data:
            raise anyio.EndOfStream
        return data

    async def aclose(self) -> None:
        pass


class _FlowControl(asyncio.Protocol):
    def __init__(self) -> None:
        self._resumed: asyncio.Future[None] | None = None
        self.lost: BaseException | None = None

    def pause_writing(self) -> None:
        if self._resumed is None:
            self._resumed = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self._resumed is not None and not self._resumed.done():
            self._resumed.set_result(None)
        self._resumed = None

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = exc or BrokenPipeError("stdout closed")
        self.resume_writing()

    async def drain(self) -> None:
        if self._resumed is not None:
            await asyncio.shield(self._resumed)


class _PipeWriterStream(anyio.abc.ByteSendStream):
    def __init__(self, transport: asyncio.WriteTransport, protocol: _FlowControl) -> None:
        self._transport = transport
        self._protocol = protocol

    async def send(self, item: bytes) -> None:
        if self._protocol.lost is not None or self._transport.is_closing():
            raise anyio.BrokenResourceError
        self._transport.write(item)  # buffered whole: a cancelled drain never leaves half a line
        await self._protocol.drain()

    async def aclose(self) -> None:
        self._transport.close()


class _FileWriterStream(anyio.abc.ByteSendStream):
    """For stdout redirected to a regular file, which never blocks for long."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    async def send(self, item: bytes) -> None:
        view = memoryview(item)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    async def aclose(self) -> None:
        pass


@asynccontextmanager
async def stdio_streams(
    in_fd: int, out_fd: int
) -> AsyncIterator[tuple[anyio.abc.ByteReceiveStream, anyio.abc.ByteSendStream]]:
    loop = asyncio.get_running_loop()
    receive: anyio.abc.ByteReceiveStream
    send: anyio.abc.ByteSendStream
    if _is_pollable(in_fd):
        reader = asyncio.StreamReader(limit=2**31)
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(in_fd, "rb", buffering=0, closefd=False)
        )
        receive = _ReaderStream(reader)
    else:
        receive = _FileReaderStream(in_fd)
    if _is_pollable(out_fd, selectors.EVENT_WRITE):
        transport, protocol = await loop.connect_write_pipe(
            _FlowControl, os.fdopen(out_fd, "wb", buffering=0, closefd=False)
        )
        send = _PipeWriterStream(transport, protocol)
    else:
        send = _FileWriterStream(out_fd)
    try:
        yield receive, send
    finally:
        await send.aclose()
