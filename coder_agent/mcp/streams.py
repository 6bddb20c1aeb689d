"""The transport's read stream, watched: it tells when the server has closed the connection.

Over stdio a server that exits ends the stream; without this, the session would only find out on the next
call. Duck-type compatible with the SDK's `ReadStream` protocol (and its `last_context`, which the SDK reads
with getattr).
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from types import TracebackType
from typing import Generic, Protocol, TypeVar

import anyio

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class _Receiver(Protocol[T_co]):
    async def receive(self) -> T_co: ...
    async def aclose(self) -> None: ...


class WatchedReadStream(Generic[T]):
    def __init__(self, inner: _Receiver[T], on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    @property
    def last_context(self) -> contextvars.Context | None:
        context: contextvars.Context | None = getattr(self._inner, "last_context", None)
        return context

    async def receive(self) -> T:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> WatchedReadStream[T]:
        return self

    async def __anext__(self) -> T:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> WatchedReadStream[T]:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc_val: BaseException | None, exc_tb: TracebackType | None
    ) -> None:
        await self.aclose()
