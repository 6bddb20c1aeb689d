"""Answering `initialize` before the async runtime is even imported.

Importing asyncio, anyio and pydantic takes longer than an editor should wait for `initialize`. The reply
depends on nothing but this agent and the client's capabilities, so the first line is read with a blocking
`os.read`, and when it is a well-formed `initialize` request it is answered at once with the stdlib;
everything else (and every byte after that line) is left to the full connection, which behaves exactly as
if it had read them itself.
Stdlib only.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

from ..unicode import find_invalid

MAX_FIRST_LINE = 1024 * 1024


def reserve_stdout() -> int:
    """Return a private fd for the protocol; from now on fd 1 and `sys.stdout` write to stderr.

    So no print, library or child process can write into the protocol stream.
    """
    protocol_fd = os.dup(1)  # not inheritable: children never see it
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol_fd


def _initialize_request(line: bytes) -> tuple[Any, dict[str, Any]] | None:
    """(id, params) when `line` is an `initialize` request the full path would accept; else None."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or message.get("method") != "initialize":
        return None
    if find_invalid(message) is not None:  # the full path explains what is wrong with it
        return None
    request_id = message.get("id")
    params = message.get("params")
    if not (isinstance(request_id, str) or (isinstance(request_id, int) and not isinstance(request_id, bool))):
        return None
    if not isinstance(params, dict):
        return None
    version = params.get("protocolVersion")
    if not isinstance(version, int) or isinstance(version, bool) or not 0 <= version <= 65535:
        return None
    return request_id, params


class EarlyRead:
    """What the early reader leaves to the full connection.

    A plain class: `dataclasses` imports `inspect` and `ast`, ~10 ms of the path to `initialize`."""

    __slots__ = ("eof", "initialize", "unread")

    def __init__(self, unread: bytes, initialize: dict[str, Any] | None, eof: bool = False) -> None:
        self.unread = unread  # read from the input but not consumed
        self.initialize = initialize  # the params of the `initialize` that was answered, if one was
        self.eof = eof  # the input ended: on a terminal (Ctrl-D) a second read would wait for another end


def answer_initialize(in_fd: int, out_fd: int, result: Callable[[Any], dict[str, Any]]) -> EarlyRead:
    """Read up to the first line; answer it if it is `initialize` (`result` gets its `clientCapabilities`)."""
    buffer = bytearray()
    while b"\n" not in buffer and len(buffer) < MAX_FIRST_LINE:
        chunk = os.read(in_fd, 65536)
        if not chunk:
            return EarlyRead(bytes(buffer), None, eof=True)
        buffer += chunk
    line, newline, rest = bytes(buffer).partition(b"\n")
    if not newline:
        return EarlyRead(bytes(buffer), None)
    request = _initialize_request(line.rstrip(b"\r"))
    if request is None:
        return EarlyRead(bytes(buffer), None)
    request_id, params = request
    reply = {"jsonrpc": "2.0", "id": request_id, "result": result(params.get("clientCapabilities"))}
    data = json.dumps(reply, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
    view = memoryview(data)
    while view:
        view = view[os.write(out_fd, view) :]
    return EarlyRead(rest, params)
