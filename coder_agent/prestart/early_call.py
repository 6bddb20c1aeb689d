"""The first model call of a process, streamed before the runtime is imported, and handed to it. Stdlib only.

Importing the runtime takes ~300 ms; a user who typed the first message before the agent started would wait
that long for a word. So the early stage (`server.early_prompt`) builds the first prompt's request exactly as
the direct path would (`DirectModel.request`), posts it over a plain socket (`raw_http`), and shows the
text deltas as they come, until the runtime is ready, other input arrives, or the reply holds anything but
text. Then it stops reading and leaves the call here (`hand_over`).

The runtime's turn makes its first model call as ever; the direct path takes the early call over when the
body it would send is byte for byte the body that was sent (`claim`), parses the reply from its first byte
with its own parser, and continues reading the same response (`llm.adopted`). The text the early stage showed
is marked so (`TextDelta.shown`): the turn keeps it for replay without sending it twice, and a failure after
it is not retried, as for any reply the user has seen. Any other call closes an early call left unclaimed.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from ..llm.wire.sse import SseParser
from .raw_http import HttpProtocolError, RawResponse

# What the early stage does with one stream event: show this text, go on without showing, or stop here.
SKIP = ""
STOP = None


class EarlyCall:
    """A model call the early stage started: its exact body, the response being read, and what was shown."""

    __slots__ = ("body", "message_id", "response", "session_id", "shown", "url")

    def __init__(self, url: str, body: bytes, response: RawResponse, message_id: str, session_id: str = "") -> None:
        self.session_id = session_id  # the session whose first prompt it answers
        self.url = url
        self.body = body
        self.response = response
        self.message_id = message_id  # the ACP messageId the text was shown under
        self.shown: list[str] = []  # the text deltas shown, in order


_lock = threading.Lock()
_pending: EarlyCall | None = None
_plain: dict[str, Any] = {}  # URL -> its TLS context (None for http): where the plain transport may post


def allow_plain(url: str, tls: Any) -> None:
    """Calls to `url` may go over `raw_http` until httpx is ready (the early stage found no proxy to go through)."""
    _plain[url] = tls


def forget_plain() -> None:
    _plain.clear()


def plain_transport(url: str) -> tuple[bool, Any]:
    """(whether a call to `url` may go over `raw_http`, the TLS context for it)."""
    return url in _plain, _plain.get(url)


def hand_over(call: EarlyCall) -> None:
    global _pending
    with _lock:
        _pending = call


def pending() -> bool:
    return _pending is not None


def claim(session_id: str | None = None) -> EarlyCall | None:
    """The early call waiting to be taken over (only if it answers `session_id`'s first prompt, when given),
    no longer waiting: the caller reads it on (`DirectModel`, when it sent the same body), or closes it and
    keeps or reports what it showed."""
    global _pending
    with _lock:
        call = _pending
        if call is None or (session_id is not None and call.session_id != session_id):
            return None
        _pending = None
    return call


def openai_text(data: str) -> str | None:
    """The text one OpenAI-compatible stream event shows, `SKIP` when it shows none (usage, a role, the finish
    reason), or `STOP` when it holds anything else: reasoning, tool calls, an error, the end, or an event the
    early stage does not read exactly as the direct path's `StreamAccumulator` does."""
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
    delta = choices[0].get("delta")
    if delta is None:
        return SKIP
    if not isinstance(delta, dict):
        return STOP
    if delta.get("reasoning_content") or delta.get("reasoning") or delta.get("thinking_blocks"):
        return STOP
    if delta.get("tool_calls"):
        return STOP
    content = delta.get("content")
    if not content:
        return SKIP
    return content if isinstance(content, str) else STOP


def anthropic_text(data: str) -> str | None:
    """As `openai_text`, for an Anthropic Messages stream event, as `AnthropicDeltas` and the accumulator read it:
    text blocks' starts and `text_delta`s show text; the start of any other block, the message's end (its
    `message_delta`), an error or an event not known here stops."""
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
        if not isinstance(block, dict) or block.get("type") != "text":
            return STOP
        text = block.get("text") or ""
    elif kind == "content_block_delta":
        delta = payload.get("delta") or {}
        if not isinstance(delta, dict) or "text" not in delta:
            return STOP
        text = delta["text"]
    else:
        return STOP
    if not isinstance(text, str):
        return STOP
    return text or SKIP


# The Responses API's events before and around a message's text, which carry none of the reply.
_RESPONSES_SKIPPED = ("response.created", "response.in_progress", "response.content_part.added")


def responses_text(data: str) -> str | None:
    """As `openai_text`, for a Responses API event, as `ResponsesReader` reads it: a message item's start and its
    `output_text.delta`s show text; any other item (reasoning, a tool call), the end of the message, an error or an
    event not known here stops."""
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
        return SKIP if isinstance(item, dict) and item.get("type") == "message" else STOP
    if kind != "response.output_text.delta":
        return STOP
    text = event.get("delta")
    if not isinstance(text, str):
        return STOP
    return text or SKIP


TEXT_OF: dict[str, Callable[[str], str | None]] = {
    "openai": openai_text,
    "anthropic": anthropic_text,
    "responses": responses_text,  # OpenAI's Responses API (`llm.wire.responses_route`)
}


def stream_text(
    call: EarlyCall,
    show: Callable[[str], None],
    wait: Callable[[RawResponse], bool],
    text_of: Callable[[str], str | None] = openai_text,
) -> None:
    """Read the response and `show` each text delta until `wait` says stop, or the reply holds anything else.

    `wait(response)` blocks until the socket has data (True) or the caller wants to stop (False). Nothing here
    raises for the reply's own failures (an HTTP error, a cut, a stall): the runtime reads those again and
    reports them as the direct path does.
    """
    response = call.response
    parser = SseParser()
    try:
        while True:
            if not response.head():
                if not wait(response) or not response.fill():
                    return
                continue
            if response.status != 200:
                return
            data = response.body()
            if data:
                for _name, event in parser.feed(data):
                    text = text_of(event)
                    if text is STOP:
                        return
                    if text:
                        call.shown.append(text)
                        show(text)
                continue
            if response.done or response.eof:
                return
            if not wait(response) or not response.fill():
                return
    except (OSError, HttpProtocolError, UnicodeDecodeError):
        return  # the runtime meets the same failure when it reads on
