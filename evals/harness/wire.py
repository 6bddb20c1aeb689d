"""The wire between harness and agent, tapped: every raw line both ways goes to `transcript.jsonl`, and every
line the agent writes is checked against the ACP v1 schema (`acp_schema.py`).

The taps sit under the JSON-RPC `Connection`, on the byte streams, so they see exactly what crossed the pipe.
The client's bytes are shown to the checker *before* they are sent, so it knows each request before the
agent can answer it.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import IO, Any, Literal

import anyio
import anyio.abc

from .acp_schema import AgentMessageValidator

Side = Literal["client", "agent"]


class WireLog:
    """Both directions of one trial's wire: the transcript file and the schema checker."""

    def __init__(self, transcript: Path) -> None:
        self.validator = AgentMessageValidator()
        self._file: IO[str] = transcript.open("a", encoding="utf-8")
        self._started = time.monotonic()
        self._partial: dict[Side, bytearray] = {"client": bytearray(), "agent": bytearray()}

    def client_sent(self, data: bytes) -> None:
        self.validator.feed_client(data)
        self._record("client", data)

    def agent_sent(self, data: bytes) -> None:
        self.validator.feed_agent(data)
        self._record("agent", data)

    def agent_closed(self) -> None:
        self.validator.end_agent()

    @property
    def violations(self) -> list[str]:
        return [str(violation) for violation in self.validator.violations]

    def close(self) -> None:
        for side, rest in self._partial.items():
            if rest:
                self._write(side, bytes(rest), partial=True)
                rest.clear()
        self._file.close()

    def _record(self, side: Side, data: bytes) -> None:
        buffer = self._partial[side]
        buffer.extend(data)
        while (cut := buffer.find(b"\n")) >= 0:
            self._write(side, bytes(buffer[:cut]))
            del buffer[: cut + 1]
        self._file.flush()

    def _write(self, side: Side, line: bytes, partial: bool = False) -> None:
        row: dict[str, object] = {
            "t": round(time.monotonic() - self._started, 4),
            "from": side,
            "line": line.decode("utf-8", errors="backslashreplace"),
        }
        if partial:
            row["partial"] = True
        self._file.write(json.dumps(row, ensure_ascii=False) + "\n")


def read_transcript(path: Path) -> list[tuple[Side, dict[str, Any] | None]]:
    """A transcript's messages in order: (who sent it, the message, or None for a line that is not JSON)."""
    rows: list[tuple[Side, dict[str, Any] | None]] = []
    for text in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(text)
        try:
            message = json.loads(row["line"])
        except ValueError:
            message = None
        rows.append((row["from"], message if isinstance(message, dict) else None))
    return rows


def methods(path: Path, side: Side) -> list[str]:
    """The methods of the requests and notifications `side` sent, in order."""
    return [str(m["method"]) for who, m in read_transcript(path) if who == side and m is not None and "method" in m]


class TapReceive(anyio.abc.ByteReceiveStream):
    """The agent's stdout, shown to the log as it is read."""

    def __init__(self, inner: anyio.abc.ByteReceiveStream, log: WireLog) -> None:
        self._inner = inner
        self._log = log

    async def receive(self, max_bytes: int = 65536) -> bytes:
        try:
            data = await self._inner.receive(max_bytes)
        except anyio.EndOfStream:
            self._log.agent_closed()
            raise
        self._log.agent_sent(data)
        return data

    async def aclose(self) -> None:
        await self._inner.aclose()


class TapSend(anyio.abc.ByteSendStream):
    """The agent's stdin, each write shown to the log first."""

    def __init__(self, inner: anyio.abc.ByteSendStream, log: WireLog) -> None:
        self._inner = inner
        self._log = log

    async def send(self, item: bytes) -> None:
        self._log.client_sent(item)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()
