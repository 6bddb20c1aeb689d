"""What a headless run shows: the `Output` seam, the run's usage tally and result, and the `--json` output.

`--json` writes one JSON object per line on stdout: `{"type":"init",...}` once the session is open (its id, the
folder, the model, the mode, whether it was continued), `{"type":"update","update":{...}}` for each session
update as the agent sent it, `{"type":"permission",...}` when a permission question was answered without asking,
then a final `{"type":"result",...}` (the stop reason, the reply's text, the files changed, the tokens and cost)
or `{"type":"error",...}`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Protocol

from ..acp.schema import AgentMessageChunk, SessionUpdate, StopReason, TextContent, ToolCallFields, UsageUpdate

META_KEY = "coder-agent"  # `agent.client.META_KEY`: the agent's own notes are marked under it
TerminalOutput = Callable[[str, bool], "str | None"]  # `render.TerminalOutput`


@dataclass
class UsageTally:
    """Tokens and cost of this run, from the agent's `usage_update`s (one per model call)."""

    model_calls: int = 0
    total_tokens: int = 0  # prompt + completion tokens, summed over the model calls
    context_tokens: int = 0  # of the last call: how full the context window is
    context_window: int = 0
    session_cost_usd: float | None = None  # the session's cumulative cost, when the provider prices the model
    cost_baseline_usd: float = 0.0  # the session's cost before this run (a continued session)

    def observe(self, update: SessionUpdate) -> None:
        if not isinstance(update, UsageUpdate):
            return
        self.model_calls += 1
        self.total_tokens += update.used
        self.context_tokens = update.used
        self.context_window = update.size
        if update.cost is not None:
            self.session_cost_usd = update.cost.amount

    @property
    def cost_usd(self) -> float | None:
        """What this run cost, when known."""
        if self.session_cost_usd is None:
            return None
        return max(self.session_cost_usd - self.cost_baseline_usd, 0.0)

    def wire(self) -> dict[str, Any]:
        cost = self.cost_usd
        return {
            "modelCalls": self.model_calls,
            "totalTokens": self.total_tokens,
            "contextTokens": self.context_tokens,
            "contextWindow": self.context_window,
            "costUsd": None if cost is None else round(cost, 6),
        }


@dataclass
class ReplyTally:
    """The reply of this run as a script wants it: the model's last message, and the files the turn changed
    (from the agent's own changed-files note, which carries them as data)."""

    text: str = ""
    files: list[dict[str, Any]] = field(default_factory=list)
    _message: str | None = None

    def observe(self, update: SessionUpdate) -> None:
        if not isinstance(update, AgentMessageChunk) or not isinstance(update.content, TextContent):
            return
        note = (update.meta or {}).get(META_KEY)
        if isinstance(note, dict):  # the agent's own words, not the model's
            if note.get("note") == "changed-files" and isinstance(note.get("files"), list):
                self.files = list(note["files"])
            return
        if update.message_id != self._message:
            self._message, self.text = update.message_id, ""
        self.text += update.content.text


@dataclass
class RunResult:
    stop_reason: StopReason
    session_id: str | None  # None: interrupted before a session was opened
    duration: float  # seconds
    usage: UsageTally = field(default_factory=UsageTally)
    reply: ReplyTally = field(default_factory=ReplyTally)


class Output(Protocol):
    """Where a run's progress goes: the terminal (`RichOutput`) or JSON lines (`JsonOutput`)."""

    @property
    def live_terminals(self) -> bool:
        """Whether it shows what commands print as it comes (`watch_terminals` then)."""
        ...

    def watch_terminals(self, read: TerminalOutput) -> None:
        """How to read the run's terminals, for a view that shows their output live."""
        ...

    def init(self, info: dict[str, Any]) -> None:
        """The session is open (`info`: its id, folder, model, mode, whether it was continued)."""
        ...

    def update(self, update: SessionUpdate) -> None: ...

    def permission(self, tool_call: ToolCallFields, option_id: str | None, note: str) -> None:
        """A permission question was answered without asking anyone (`note` says why)."""
        ...

    def notice(self, text: str) -> None:
        """A word from the CLI itself (e.g. "cancelling")."""
        ...

    def paused(self) -> AbstractContextManager[None]:
        """Nothing is drawn while this is open: the user is being asked something on the terminal."""
        ...

    async def animate(self) -> None:
        """Redraw what moves (streamed text, spinners) until cancelled; returns at once if nothing does."""
        ...

    def result(self, result: RunResult) -> None: ...

    def error(self, message: str, session_id: str | None = None) -> None: ...

    def close(self) -> None:
        """Stop drawing at once (the process is about to exit without a result)."""
        ...


class JsonOutput:
    live_terminals = False  # a command's output comes in its tool call's last update, as text

    def __init__(self, stream: BinaryIO | None = None) -> None:
        self._stream = stream if stream is not None else sys.stdout.buffer
        self._broken = False
        # What comes while the session opens (its commands, its options): after the init line, which comes first
        self._before_init: list[bytes] | None = []

    def watch_terminals(self, read: TerminalOutput) -> None:
        return

    def init(self, info: dict[str, Any]) -> None:
        self._object({"type": "init", **info})
        self._flush()

    def _flush(self) -> None:
        held, self._before_init = self._before_init or [], None
        for line in held:
            self._line(line)

    def _line(self, data: bytes) -> None:
        if self._broken:
            return
        try:
            self._stream.write(data + b"\n")
            self._stream.flush()
        except BrokenPipeError:  # the reader went away (`| head`): keep running, stop writing
            self._broken = True

    def _object(self, value: dict[str, Any]) -> None:
        self._line(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())

    def update(self, update: SessionUpdate) -> None:
        line = b'{"type":"update","update":%s}' % update.wire_json()
        if self._before_init is not None:
            self._before_init.append(line)
        else:
            self._line(line)

    def permission(self, tool_call: ToolCallFields, option_id: str | None, note: str) -> None:
        self._object(
            {
                "type": "permission",
                "toolCallId": tool_call.tool_call_id,
                "title": tool_call.title,
                "optionId": option_id,
                "note": note,
            }
        )

    def notice(self, text: str) -> None:
        sys.stderr.write(f"coder-agent: {text}\n")

    @contextmanager
    def paused(self) -> Iterator[None]:
        yield

    async def animate(self) -> None:
        return

    def result(self, result: RunResult) -> None:
        self._flush()
        self._object(
            {
                "type": "result",
                "stopReason": result.stop_reason,
                "sessionId": result.session_id,
                "text": result.reply.text,
                "filesChanged": result.reply.files,
                "usage": result.usage.wire(),
                "durationMs": round(result.duration * 1000),
            }
        )

    def error(self, message: str, session_id: str | None = None) -> None:
        self._flush()
        error: dict[str, Any] = {"type": "error", "message": message}
        if session_id is not None:
            error["sessionId"] = session_id
        self._object(error)

    def close(self) -> None:
        self._broken = True
