"""The permission modes a session can be in, once for everything that names them. Stdlib only.

What each mode allows is decided in `agent.permissions`.
"""

from __future__ import annotations

from typing import NamedTuple


class Mode(NamedTuple):
    id: str
    name: str
    description: str


MODES = (
    Mode("ask", "Ask", "Every edit and every command asks first"),
    Mode("default", "Default", "Reads are free; edits and commands ask"),
    Mode("accept-edits", "Accept edits", "Edits inside the project are free; commands ask"),
    Mode("plan", "Plan", "Read-only: no edits, no commands; the agent plans"),
    Mode("bypass", "Bypass", "Nothing asks (use with care)"),
)
MODE_IDS = tuple(mode.id for mode in MODES)
DEFAULT_MODE = "default"
