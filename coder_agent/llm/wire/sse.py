"""Server-sent events from a byte stream: (event name, data) pairs, parsed by hand to keep each event cheap.

Stdlib only: the early first call (`early_call`) parses with the same `SseParser` as the direct path.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator


class SseParser:
    """Fed the stream's bytes as they come; gives each whole event's name ("message" when unnamed) and its data
    lines joined with newlines.

    Comments and `id:`/`retry:` fields are skipped; an event without data is not given (as browsers do). Lines
    may end in LF or CRLF (a lone CR is not treated as a line end). An event not closed by a blank line when the
    stream ends is incomplete: it is never given, as the spec says.
    """

    __slots__ = ("_data", "_name", "_pending")

    def __init__(self) -> None:
        self._pending = b""
        self._name = "message"
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[tuple[str, str]]:
        events: list[tuple[str, str]] = []
        pending = self._pending + chunk if self._pending else chunk
        start = 0
        while (end := pending.find(b"\n", start)) >= 0:
            line = pending[start:end]
            start = end + 1
            if line.endswith(b"\r"):
                line = line[:-1]
            if not line:  # a blank line ends the event
                if self._data:
                    events.append((self._name, "\n".join(self._data)))
                    self._data = []
                self._name = "message"
            elif line.startswith(b"data:"):
                value = line[5:]
                self._data.append((value[1:] if value.startswith(b" ") else value).decode())
            elif line.startswith(b"event:"):
                self._name = line[6:].strip().decode()
        self._pending = pending[start:]
        return events


async def sse_events(chunks: AsyncIterable[bytes]) -> AsyncIterator[tuple[str, str]]:
    """Each event of the stream, as `SseParser` reads them."""
    parser = SseParser()
    async for chunk in chunks:
        for event in parser.feed(chunk):
            yield event
