"""What this agent says about itself in `initialize`. Stdlib only: it is on the start-up fast path."""

from __future__ import annotations

from typing import Any

from .. import __version__

PROTOCOL_VERSION = 1


def initialize_result() -> dict[str, Any]:
    """The `initialize` result, in wire form. Advertise only what works."""
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
            "mcpCapabilities": {"http": True, "sse": True},
            "sessionCapabilities": {
                "list": {},
                "resume": {},
                "close": {},
                "delete": {},
                "fork": {},  # unstable in v1: see agent/session_methods.py
                "additionalDirectories": {},
            },
        },
        "agentInfo": {"name": "coder-agent", "title": "Coder Agent", "version": __version__},
        "authMethods": [],
    }
