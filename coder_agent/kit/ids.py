"""Ids for sessions, tool calls and messages. Stdlib only: the early `session/new` makes one too."""

from __future__ import annotations

import os


def new_id(prefix: str) -> str:
    """`<prefix>_` and a random UUID4's 32 hex digits, as `uuid.uuid4().hex` writes it (`uuid`: ~4 ms to import)."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    return f"{prefix}_{raw.hex()}"
