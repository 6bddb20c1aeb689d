"""Answering `initialize`, and then `session/new`, before the async runtime is even imported.

Importing asyncio, anyio and pydantic takes longer than an editor should wait for `initialize`. The reply
depends on nothing but this agent and the client's capabilities, so the first line is read with a blocking
`os.read`, and when it is a well-formed `initialize` request it is answered at once with the stdlib. The next
line may be answered the same way (`answer_next`: the caller decides which requests it can answer exactly;
`prestart.early_session` does `session/new`) while the runtime is imported in another thread. Everything else
(and every byte after the lines answered) is left to the full connection, which behaves exactly as if it had
read them itself.
Stdlib only.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..kit.masking import mask_bytes
from ..kit.unicode import find_invalid

if TYPE_CHECKING:
    from .early_call import EarlyCall

MAX_FIRST_LINE = 1024 * 1024
MAX_READ_AHEAD = 1024 * 1024  # input read while waiting for the runtime (to see it end); past this, only wait
IDLE = 0.1  # seconds without input after which the reader counts as waiting (an editor sends its lines at once)


def reserve_stdout() -> int:
    """Return a private fd for the protocol; from now on fd 1 and `sys.stdout` write to stderr.

    So no print, library or child process can write into the protocol stream.
    """
    protocol_fd = os.dup(1)  # not inheritable: children never see it
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol_fd


class EarlyRead:
    """What the early reader leaves to the full connection.

    A plain class: `dataclasses` imports `inspect` and `ast`, ~10 ms of the path to `initialize`."""

    __slots__ = ("answered", "call", "eof", "initialize", "unread")

    def __init__(self, unread: bytes, initialize: dict[str, Any] | None, eof: bool = False) -> None:
        self.unread = unread  # read from the input but not consumed
        self.initialize = initialize  # the params of the `initialize` that was answered, if one was
        self.eof = eof  # the input ended: on a terminal (Ctrl-D) a second read would wait for another end
        self.answered: object = None  # what `answer_next` answered, as its answerer described it
        self.call: EarlyCall | None = None  # the first prompt's first model call, when the early stage made it


def _fill_line(
    in_fd: int, buffer: bytearray, ready_fd: int | None = None, idle: Callable[[], None] | None = None
) -> str:
    """Read into `buffer` until it holds a whole line: "line", "eof", "long" (no newline within the cap), or
    "ready" when `ready_fd` became readable first (the caller stops waiting for input then). `idle` is called
    once when the input does not come within `IDLE` (the reader has nothing to do for now)."""
    import select

    while b"\n" not in buffer:
        if len(buffer) >= MAX_FIRST_LINE:
            return "long"
        if idle is not None and not select.select([in_fd], [], [], IDLE)[0]:
            idle()
            idle = None
        if ready_fd is not None:
            readable, _, _ = select.select([in_fd, ready_fd], [], [])
            if in_fd not in readable:
                return "ready"
        chunk = os.read(in_fd, 65536)
        if not chunk:
            return "eof"
        buffer += chunk
    return "line"


def _request(line: bytes, method: str) -> tuple[Any, dict[str, Any]] | None:
    """(id, params) when `line` is a well-formed request for `method` with object params; else None."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or message.get("method") != method:
        return None
    if find_invalid(message) is not None:  # the full path explains what is wrong with it
        return None
    request_id = message.get("id")
    params = message.get("params")
    if not (isinstance(request_id, str) or (isinstance(request_id, int) and not isinstance(request_id, bool))):
        return None
    if not isinstance(params, dict):
        return None
    return request_id, params


def write_message(out_fd: int, message: dict[str, Any]) -> None:
    """One JSON-RPC message, written whole as one line (the early stages write their own), every known secret
    masked (`masking`), as the full connection writes them."""
    line = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
    view = memoryview(mask_bytes(line))
    while view:
        view = view[os.write(out_fd, view) :]


def _reply(out_fd: int, request_id: Any, result: dict[str, Any]) -> None:
    write_message(out_fd, {"jsonrpc": "2.0", "id": request_id, "result": result})


def answer_initialize(in_fd: int, out_fd: int, result: Callable[[Any], dict[str, Any]]) -> EarlyRead:
    """Read up to the first line; answer it if it is `initialize` (`result` gets its `clientCapabilities`)."""
    buffer = bytearray()
    state = _fill_line(in_fd, buffer)
    if state != "line":
        return EarlyRead(bytes(buffer), None, eof=state == "eof")
    line, _, rest = bytes(buffer).partition(b"\n")
    request = _request(line.rstrip(b"\r"), "initialize")
    if request is None:
        return EarlyRead(bytes(buffer), None)
    request_id, params = request
    version = params.get("protocolVersion")
    if not isinstance(version, int) or isinstance(version, bool) or not 0 <= version <= 65535:
        return EarlyRead(bytes(buffer), None)
    _reply(out_fd, request_id, result(params.get("clientCapabilities")))
    return EarlyRead(rest, params)


# params -> (the result to send, what the full agent must take over), or None to leave the request to it
Answerer = Callable[[dict[str, Any]], "tuple[dict[str, Any], object] | None"]


def answer_next(
    early: EarlyRead,
    in_fd: int,
    out_fd: int,
    method: str,
    answer: Answerer,
    ready_fd: int | None = None,
    idle: Callable[[], None] | None = None,
) -> EarlyRead:
    """After an early `initialize`: answer the next line too when it is a `method` request `answer` takes.

    Waits for that line, or until `ready_fd` is readable (the full agent is ready: it answers from then on).
    `early.answered` is what `answer` returned for the full agent to take over.
    """
    if early.initialize is None or early.eof:
        return early
    buffer = bytearray(early.unread)
    state = _fill_line(in_fd, buffer, ready_fd, idle)
    if state != "line":
        return EarlyRead(bytes(buffer), early.initialize, eof=state == "eof")
    line, _, rest = bytes(buffer).partition(b"\n")
    request = _request(line.rstrip(b"\r"), method)
    answered = answer(request[1]) if request is not None else None
    if request is None or answered is None:
        return EarlyRead(bytes(buffer), early.initialize)
    _reply(out_fd, request[0], answered[0])
    done = EarlyRead(rest, early.initialize)
    done.answered = answered[1]
    return done


def wait_for_runtime(
    early: EarlyRead, in_fd: int, ready_fd: int, nothing_left: Callable[[EarlyRead], bool]
) -> EarlyRead:
    """Wait until `ready_fd` is readable (the runtime is in), reading the input meanwhile: what comes is kept for
    the full connection, and its end is noted. Returns at once when the input has ended and `nothing_left` says
    no request in it waits for an answer: the caller exits then, without the runtime."""
    import select

    buffer, eof = bytearray(early.unread), early.eof
    while True:
        kept = EarlyRead(bytes(buffer), early.initialize, eof)
        kept.answered, kept.call = early.answered, early.call
        if eof and nothing_left(kept):
            return kept
        watch = [ready_fd] if eof or len(buffer) >= MAX_READ_AHEAD else [ready_fd, in_fd]
        readable, _, _ = select.select(watch, [], [])
        if ready_fd in readable:
            return kept
        chunk = os.read(in_fd, 65536)
        if not chunk:
            eof = True  # never read again: a terminal's Ctrl-D is not sticky
        buffer += chunk
