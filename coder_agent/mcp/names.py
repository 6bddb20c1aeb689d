"""The names MCP tools are offered to the model under: `mcp__<server>__<tool>`, valid for every provider.

Providers accept `^[a-zA-Z0-9_-]{1,64}$`. Other characters become `_`; a name that is too long keeps its start
and ends with a short hash of what it stands for; a name already taken gets a numbered suffix. A server's tool
keeps its name for the whole session, even across reconnections.
"""

from __future__ import annotations

import hashlib
import re

MAX_LENGTH = 64
PREFIX = "mcp"
_INVALID = re.compile(r"[^a-zA-Z0-9_-]")


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def _fit(name: str, identity: str) -> str:
    if len(name) <= MAX_LENGTH:
        return name
    suffix = "_" + _short_hash(identity)
    return name[: MAX_LENGTH - len(suffix)] + suffix


def sanitise(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>` with invalid characters replaced and the length capped."""
    raw = f"{PREFIX}__{server}__{tool}"
    return _fit(_INVALID.sub("_", raw), raw)


class ToolNames:
    """Hands out unique public names; the same (server, tool) pair always gets the same name."""

    def __init__(self) -> None:
        self._by_key: dict[tuple[int, str], str] = {}
        self._taken: set[str] = set()

    def name(self, server_index: int, server: str, tool: str) -> str:
        key = (server_index, tool)
        known = self._by_key.get(key)
        if known is not None:
            return known
        name = sanitise(server, tool)
        number = 1
        while name in self._taken:
            number += 1
            suffix = f"_{number}"
            base = sanitise(server, tool)
            name = base[: MAX_LENGTH - len(suffix)] + suffix
        self._by_key[key] = name
        self._taken.add(name)
        return name


def left_out(server: str, reason: str) -> str:
    """What the user is told about a server that could not start."""
    return f"MCP server `{server}` could not start: {reason}; it is left out of this session"
