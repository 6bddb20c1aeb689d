"""The state of one connection to an MCP server, shared by the task that owns it and the calls that use it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:
    from mcp import ClientSession


class Attempt:
    """Connecting, then up (until broken), or failed. `done` is set once it is up or has failed."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline  # to be up by
        self.done = anyio.Event()
        self.leave = anyio.Event()  # its task should tear the connection down
        self.session: ClientSession | None = None
        self.error: str | None = None
        self.broken = False
        self.scope = anyio.CancelScope(deadline=deadline)  # around the connection; cancelled early by `stop`

    @property
    def usable(self) -> bool:
        return self.session is not None and not self.broken

    @property
    def finished(self) -> bool:
        """Failed, or up and since broken: a new attempt is needed."""
        return self.done.is_set() and not self.usable

    def succeed(self, session: ClientSession) -> bool:
        """Up; False when it was already given up (its task should leave at once)."""
        if self.done.is_set() or self.broken:
            return False
        self.session = session
        self.done.set()
        return True

    def fail(self, error: str) -> None:
        """Failed to come up (a no-op once up or failed)."""
        if self.done.is_set():
            return
        self.error = error
        self.broken = True
        self.done.set()
        self.stop()

    def break_(self) -> None:
        """The connection is dead or hung: tear it down; the next call starts a new one."""
        self.broken = True
        self.stop()

    def lost(self) -> None:
        """The server closed the connection: once up, that breaks it (connecting fails by itself)."""
        if self.session is not None:
            self.break_()

    def stop(self) -> None:
        self.leave.set()
        if not self.done.is_set():
            self.scope.cancel()

    def end(self) -> None:
        """Its task has left: whatever happened, nobody may use or wait for it any more."""
        self.broken = True
        self.fail("it stopped")
        self.leave.set()
