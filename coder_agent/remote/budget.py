"""What the whole server holds of its clients' messages, bounded: the inbound budget.

Every client message is counted here from the moment the server starts to hold it (a WebSocket frame's payload
before it is read, a POST body before it is read) until the connection's agent has taken it off its input and
parsed it. The total never passes `limit`: a message that does not fit waits for room, and after `wait` seconds
it is refused (503 on a POST; on a WebSocket the connection is closed with 1013, "try again later"). One message
is always let in when nothing else is held, so a message up to the per-message limit can never be stuck.

Connections share it, so a client cannot grow the server by sending many large messages at once, over one
connection or many (README, "Limits").
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import anyio

log = logging.getLogger(__name__)


class Busy(Exception):
    """No room for a message within the wait."""


class InboundBudget:
    def __init__(self, limit: int, wait: float) -> None:
        self.limit = limit
        self.wait = wait
        self.used = 0
        self.peak = 0  # tests and benchmarks look
        self.changed = anyio.Event()  # set (and replaced) at each take and release
        self._listeners: list[Callable[[], None]] = []  # protocol callbacks (sync, on the event loop)

    def try_take(self, size: int) -> bool:
        if self.used and self.used + size > self.limit:
            return False
        self.used += size
        self.peak = max(self.peak, self.used)
        self._changed()
        return True

    def _changed(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    async def take(self, size: int) -> None:
        """Wait (at most `wait` seconds) until `size` bytes fit, and count them; `Busy` if they never did."""
        with anyio.move_on_after(self.wait):
            while not self.try_take(size):
                await self.changed.wait()
            return
        raise Busy(f"the server holds {self.used} bytes of messages not yet handled (limit {self.limit})")

    def release(self, size: int) -> None:
        if size <= 0:
            return
        self.used -= size
        self._changed()
        listeners, self._listeners = self._listeners, []
        for listener in listeners:
            listener()

    def when_freed(self, listener: Callable[[], None]) -> None:
        """Call `listener` (once) at the next release: a paused WebSocket tries again."""
        self._listeners.append(listener)

    def forget(self, listener: Callable[[], None]) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)


class Held:
    """Bytes one holder (a POST, a WebSocket connection) counts in the budget; never let go of twice."""

    def __init__(self, budget: InboundBudget) -> None:
        self._budget = budget
        self.size = 0

    async def take(self, size: int) -> None:
        await self._budget.take(size)
        self.size += size

    def try_take(self, size: int) -> bool:
        if not self._budget.try_take(size):
            return False
        self.size += size
        return True

    def release(self, size: int | None = None) -> None:
        """Let go of `size` bytes (all when None); never more than is held."""
        amount = self.size if size is None else max(0, min(size, self.size))
        self.size -= amount
        self._budget.release(amount)

    def handed_over(self) -> Callable[[], None]:
        """All that is held, now to be let go of by whoever takes the message on: call the result once."""
        size, self.size = self.size, 0
        budget = self._budget

        def release() -> None:
            nonlocal size
            budget.release(size)
            size = 0

        return release
