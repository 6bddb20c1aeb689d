"""The first model call of a process, streamed before the runtime is imported, and handed to it. Stdlib only.

Importing the runtime takes ~300 ms; a user who typed the first message before the agent started would wait
that long for a word. So the early stage (`prestart.early_prompt`) builds the first prompt's request exactly as
the model adapter would (`DirectModel.request`), posts it over a plain socket (`raw_http`), and shows the
thoughts and text as they come, until the runtime is ready, other input arrives, or the reply holds anything
else. Then it stops reading and hands the call down (`EarlyRead.call`).

The runtime's turn makes its first model call as ever; the adapter takes the early call over when the body it
would send is byte for byte the body that was sent (`EarlyCall.claim`), and parses the reply from its first byte
with its own parser, reading on from the same response (`llm.adopted`). What the early stage showed comes out of
it again: the turn keeps it, and the editor is not sent it twice (`server.early_reply`); a failure after it is not
retried, as for any reply the user has seen. A call nobody takes over is closed.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from ..llm.wire.sse import SseParser
from .raw_http import HttpProtocolError, RawResponse

# What the early stage does with one stream event: show these (and whether the reply ended there, as a turn ends:
# `END`), go on without showing (`SKIP`), or stop here (`STOP`).
Read = tuple[list[tuple[str, str]], bool]
SKIP: Read = ([], False)
END: Read = ([], True)
STOP = None


Shown = tuple[str, str]  # ("text" or "thought", the text shown)


class EarlyCall:
    """A model call the early stage started: its exact request, the response being read, and what was shown.

    Handed down as an object (`EarlyRead.call` -> the serve loop -> the model factory), never kept in a global: the
    session's first model call takes it over (`claim`) when it sends the same bytes, and the editor is sent each
    piece of the reply once (`server.early_reply`)."""

    __slots__ = (
        "_claimed",
        "_lock",
        "adopted",
        "answered",
        "body",
        "message_id",
        "response",
        "session_id",
        "shown",
        "thought_id",
        "tls",
        "url",
    )

    def __init__(
        self,
        url: str,
        body: bytes,
        response: RawResponse,
        message_id: str,
        session_id: str = "",
        tls: Any = None,
        thought_id: str = "",
    ) -> None:
        self.session_id = session_id  # the session whose first prompt it answers
        self.url = url
        self.body = body
        self.response = response
        self.tls = tls  # the TLS context it connected with: calls to `url` may use it until httpx is ready
        self.message_id = message_id  # the ACP messageId the text was shown under
        self.thought_id = thought_id or message_id  # and the thoughts
        self.shown: list[Shown] = []  # what was shown, in order
        self.adopted = False  # a model call took it over and reads its reply on
        # The prompt's request id, when the reply ended (text only, `end_turn`) before the runtime was in and the early
        # stage answered the prompt itself: the runtime's turn then keeps the turn, and its own answer is not sent.
        self.answered: object = None
        self._claimed = False
        self._lock = threading.Lock()

    def claim(self) -> bool:
        """True once: to the first caller, who reads the call on (it sent the same bytes) or closes it."""
        with self._lock:
            if self._claimed:
                return False
            self._claimed = True
            return True

    @property
    def claimed(self) -> bool:
        return self._claimed


def openai_text(data: str) -> Read | None:
    """What one Chat Completions stream event shows (its reasoning, then its text; `SKIP` for usage or a role; `END`
    with the finish reason `stop`), or `STOP` when it holds anything else: tool calls, an error, another finish
    reason, the end without one, or an event the early stage does not read exactly as the model adapter's
    `StreamAccumulator` does."""
    if data == "[DONE]":
        return STOP
    try:
        chunk = json.loads(data)
    except ValueError:
        return STOP
    if not isinstance(chunk, dict) or "error" in chunk:
        return STOP
    choices = chunk.get("choices")
    if not choices:
        return SKIP
    if not isinstance(choices, list) or not isinstance(choices[0], dict):
        return STOP
    finish = choices[0].get("finish_reason")
    if finish not in (None, "stop"):
        return STOP
    delta = choices[0].get("delta")
    if delta is None:
        return END if finish else SKIP
    if not isinstance(delta, dict) or delta.get("tool_calls"):
        return STOP
    shown: list[Shown] = []
    reasoning = delta.get("reasoning_content") or delta.get("reasoning")
    if reasoning:
        if not isinstance(reasoning, str):
            return STOP
        shown.append(("thought", reasoning))
    content = delta.get("content")
    if content:
        if not isinstance(content, str):
            return STOP
        shown.append(("text", content))
    return shown, finish == "stop"


def anthropic_text(data: str) -> Read | None:
    """As `openai_text`, for an Anthropic Messages stream event, as `AnthropicDeltas` and the accumulator read it:
    text blocks' starts and `text_delta`s show text, `thinking_delta`s show thoughts; the message's end (its
    `message_delta`) with the stop reason `end_turn` ends it; a tool call, another stop reason, an error or an event
    not known here stops."""
    try:
        payload = json.loads(data)
    except ValueError:
        return STOP
    if not isinstance(payload, dict):
        return STOP
    kind = payload.get("type")
    if kind in ("ping", "message_start", "content_block_stop"):
        return SKIP
    if kind == "content_block_start":
        block = payload.get("content_block") or {}
        if not isinstance(block, dict):
            return STOP
        if block.get("type") in ("thinking", "redacted_thinking"):
            return SKIP  # the adapter shows a thinking block's deltas, not its start
        if block.get("type") != "text":
            return STOP
        return _shown("text", block.get("text") or "")
    if kind == "content_block_delta":
        delta = payload.get("delta") or {}
        if not isinstance(delta, dict):
            return STOP
        if delta.get("type") == "signature_delta":
            return SKIP
        if delta.get("type") == "thinking_delta":
            return _shown("thought", delta.get("thinking"))
        if "text" not in delta:
            return STOP
        return _shown("text", delta["text"])
    if kind == "message_delta":
        delta = payload.get("delta") or {}
        return END if isinstance(delta, dict) and delta.get("stop_reason") == "end_turn" else STOP
    return STOP


def _shown(kind: str, text: object) -> Read | None:
    if not isinstance(text, str):
        return STOP
    return ([(kind, text)], False) if text else SKIP


# The Responses API's events that carry nothing `ResponsesReader` shows: the response's start, an item's or a
# part's end (a reasoning item's encrypted content, a message's whole text: the runtime reads them from the bytes)
_RESPONSES_SKIPPED = (
    *("response.created", "response.in_progress", "response.content_part.added", "response.content_part.done"),
    *("response.output_text.done", "response.output_item.done", "response.reasoning_summary_text.done"),
    "response.reasoning_summary_part.done",
)


def responses_text(data: str) -> Read | None:
    """As `openai_text`, for a Responses API event, as `ResponsesReader` reads it: `output_text.delta`s show text,
    the first reasoning item's first summary part shows thoughts (the reader puts a blank line between parts: a
    second part or item stops here), `response.completed` ends it; a tool call, any other item, an error, an
    incomplete response or an event not known here stops."""
    try:
        event = json.loads(data)
    except ValueError:
        return STOP
    if not isinstance(event, dict):
        return STOP
    kind = event.get("type")
    if kind in _RESPONSES_SKIPPED:
        return SKIP
    if kind == "response.output_item.added":
        item = event.get("item")
        item_kind = item.get("type") if isinstance(item, dict) else None
        first = event.get("output_index") == 0
        return SKIP if item_kind == "message" or (item_kind == "reasoning" and first) else STOP
    if kind == "response.reasoning_summary_part.added":
        return SKIP if event.get("summary_index") == 0 else STOP
    if kind == "response.reasoning_summary_text.delta":
        return _shown("thought", event.get("delta")) if event.get("summary_index") == 0 else STOP
    if kind == "response.output_text.delta":
        return _shown("text", event.get("delta"))
    if kind == "response.completed":
        return END
    return STOP


TEXT_OF: dict[str, Callable[[str], Read | None]] = {
    "openai": openai_text,
    "anthropic": anthropic_text,
    "responses": responses_text,  # OpenAI's Responses API (`llm.wire.responses_route`)
}


def stream_text(
    call: EarlyCall,
    show: Callable[[str, str], None],
    wait: Callable[[RawResponse], bool],
    text_of: Callable[[str], Read | None] = openai_text,
) -> bool:
    """Read the response and `show(kind, text)` each piece until `wait` says stop, or the reply holds anything else.
    Whether the reply ended as a turn ends (`END`: text and thoughts only, `end_turn`).

    `wait(response)` blocks until the socket has data (True) or the caller wants to stop (False). Nothing here
    raises for the reply's own failures (an HTTP error, a cut, a stall): the runtime reads those again and
    reports them as the model adapter does.
    """
    response = call.response
    parser = SseParser()
    try:
        while True:
            if not response.head():
                if not wait(response) or not response.fill():
                    return False
                continue
            if response.status != 200:
                return False
            data = response.body()
            if data:
                for _name, event in parser.feed(data):
                    read = text_of(event)
                    if read is STOP:
                        return False
                    pieces, ended = read
                    for kind, text in pieces:
                        call.shown.append((kind, text))
                        show(kind, text)
                    if ended:
                        return any(kind == "text" for kind, _ in call.shown)
                continue
            if response.done or response.eof:
                return False
            if not wait(response) or not response.fill():
                return False
    except (OSError, HttpProtocolError, UnicodeDecodeError):
        return False  # the runtime meets the same failure when it reads on
