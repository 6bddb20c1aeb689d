"""The wire between harness and agent, tapped: every raw line both ways goes to `transcript.jsonl`, and every
line the agent writes is checked against the ACP v1 schema (`acp_schema.py`).

The process's pipes are tapped (`agent_process.start_agent`), under any JSON-RPC client, so the log sees exactly
what crossed them. The client's bytes are shown to the checker *before* they are sent, so it knows each
request before the agent can answer it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Literal

from .acp_schema import AgentMessageValidator

Side = Literal["client", "agent"]


class WireLog:
    """Both directions of one trial's wire: the transcript file (if any) and the schema checker."""

    def __init__(
        self,
        transcript: Path | None = None,
        on_agent_lines: Callable[[list[dict[str, Any] | None]], None] | None = None,
        *,
        check: bool = True,
    ) -> None:
        """`on_agent_lines` gets each line the agent completes, as the checker parsed it (None: not an object).

        `check=False` leaves the schema checker out (a benchmark times the agent, not the checker).
        """
        self.validator = AgentMessageValidator()
        self._check = check
        self._on_agent_lines = on_agent_lines
        self._file: IO[str] | None = transcript.open("a", encoding="utf-8") if transcript is not None else None
        self._started = time.monotonic()
        self._partial: dict[Side, bytearray] = {"client": bytearray(), "agent": bytearray()}

    def client_sent(self, data: bytes) -> None:
        if self._check:
            self.validator.feed_client(data)
        self._record("client", data)

    def agent_sent(self, data: bytes) -> None:
        parsed = self.validator.feed_agent(data) if self._check else []
        self._record("agent", data)
        if parsed and self._on_agent_lines is not None:
            self._on_agent_lines(parsed)

    def agent_closed(self) -> None:
        if self._check:
            self.validator.end_agent()

    @property
    def violations(self) -> list[str]:
        return [str(violation) for violation in self.validator.violations]

    def close(self) -> None:
        if self._file is None:
            return
        for side, rest in self._partial.items():
            if rest:
                self._write(side, bytes(rest), partial=True)
                rest.clear()
        self._file.close()

    def _record(self, side: Side, data: bytes) -> None:
        if self._file is None:
            return
        buffer = self._partial[side]
        buffer.extend(data)
        while (cut := buffer.find(b"\n")) >= 0:
            self._write(side, bytes(buffer[:cut]))
            del buffer[: cut + 1]
        self._file.flush()

    def _write(self, side: Side, line: bytes, partial: bool = False) -> None:
        assert self._file is not None
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
