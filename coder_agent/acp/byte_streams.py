"""The agent's input as a byte stream fed from memory (remote connections, in-process clients)."""

from __future__ import annotations

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream


class MemoryByteReceiveStream(anyio.abc.ByteReceiveStream):
    """What the agent reads: each item as it was sent, then EOF once the sending side is closed."""

    def __init__(self, receive: MemoryObjectReceiveStream[bytes]) -> None:
        self._receive = receive

    async def receive(self, max_bytes: int = 65536) -> bytes:
        try:
            return await self._receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise anyio.EndOfStream from None

    async def aclose(self) -> None:
        self._receive.close()
