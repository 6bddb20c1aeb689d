"""The response of the early first call (`llm.early_call`), read on by the runtime as the direct path reads httpx's.

It offers what `DirectModel` reads of an httpx response: the status, the reason, the headers and the body
bytes (from the first one: the direct path's own parser reads the whole stream, what the early stage showed
included), and raises the direct path's own failures: `StreamStalled` when no data comes within the stall
timeout, `StreamDropped` when the connection breaks or the body ends unfinished. The socket is blocking, so
each read waits in a worker thread; a cancelled read closes the socket, which ends the thread's wait.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio

from ..prestart.raw_http import HttpProtocolError, RawResponse
from .errors import ProviderUnreachable, StreamDropped, StreamStalled


class AdoptedResponse:
    def __init__(self, raw: RawResponse) -> None:
        self._raw = raw
        self.status_code = 0
        self.reason_phrase = ""
        self.headers: dict[str, str] = {}

    async def start(self) -> None:
        """Read up to the end of the headers (the early stage may have stopped before)."""
        raw = self._raw
        try:
            while not raw.head():
                await self._fill()
        except (StreamStalled, StreamDropped) as exc:
            raise ProviderUnreachable(f"no answer from the provider: {exc}") from exc
        except HttpProtocolError as exc:
            raise ProviderUnreachable(str(exc)) from exc
        self.status_code, self.reason_phrase, self.headers = raw.status, raw.reason, dict(raw.headers)

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        raw = self._raw
        if raw.seen:
            yield bytes(raw.seen)  # what the early stage read: parsed again from the start
        while True:
            try:
                data = raw.body()
            except HttpProtocolError as exc:
                raise StreamDropped(str(exc)) from exc
            if data:
                yield data
            elif raw.done:
                return
            else:
                await self._fill()

    async def _fill(self) -> None:
        raw = self._raw
        if raw.eof:
            raise StreamDropped("peer closed connection without sending complete message body")
        try:
            await anyio.to_thread.run_sync(raw.fill_blocking, abandon_on_cancel=True)  # sets `eof` at the end
        except TimeoutError as exc:
            raise StreamStalled("no data within the read timeout") from exc
        except OSError as exc:
            raise StreamDropped(str(exc)) from exc

    async def aclose(self) -> None:
        self._raw.close()
