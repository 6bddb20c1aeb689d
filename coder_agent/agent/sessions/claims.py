"""The seam through which `Sessions` learns whether another connection holds a session.

On stdio there is one connection and no claims. `coder-agent serve` runs one `Sessions` per connection over one
store: a session is live in at most one of them at a time, so two connections never drive (and save) one
session at once. A connection that is going away still holds its sessions until its turns have stopped and
its sessions are saved; another connection may wait for that (bounded) instead of being refused.
"""

from __future__ import annotations

from typing import Protocol


class SessionClaims(Protocol):
    def claim(self, session_id: str) -> bool:
        """Hold the session for this connection; False when another connection holds it."""
        ...

    def release(self, session_id: str) -> None:
        """Let the session go (closed, deleted, or this connection ended)."""
        ...

    async def wait_released(self, session_id: str) -> None:
        """Return once no *closing* connection holds the session, or after a bounded wait; at once otherwise."""
        ...
