"""Server-sent events from a byte stream: (event name, data) pairs, parsed by hand to keep each event cheap."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator


async def sse_events(chunks: AsyncIterable[bytes]) -> AsyncIterator[tuple[str, str]]:
    """Each event's name ("message" when unnamed) and its data lines joined with newlines.

    Comments and `id:`/`retry:` fields are skipped; an event without data is not yielded (as browsers do).
    Lines may end in LF or CRLF (a lone CR is not treated as a line end).
    """
    pending = b""
    name = "message"
    data: list[str] = []
    async for chunk in chunks:
        pending = pending + chunk if pending else chunk
        start = 0
        while (end := pending.find(b"\n", start)) >= 0:
            line = pending[start:end]
            start = end + 1
            if line.endswith(b"\r"):
                line = line[:-1]
            if not line:  # a blank line ends the event
                if data:
                    yield name, "\n".join(data)
                    data = []
                name = "message"
            elif line.startswith(b"data:"):
                value = line[5:]
                data.append((value[1:] if value.startswith(b" ") else value).decode())
            elif line.startswith(b"event:"):
                name = line[6:].strip().decode()
        pending = pending[start:]
    # An event not closed by a blank line when the stream ends is incomplete: it is dropped, as the spec says.
