"""When the agent is quiet: no prompt turn running, and none that started or ended a moment ago.

Work that holds the interpreter for seconds waits for a quiet moment, so that it does not slow a turn the user is
waiting on: importing litellm (2-5 s, most of it holding the GIL) doubled the wait for the first reply when a
prompt came while it ran (`bench/first_token.py`, the prompt sent 2 s after `session/new`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager

import anyio


class Activity:
    def __init__(self) -> None:
        self._running = 0
        self._turns = 0  # turns that have started
        self._since = time.monotonic()  # the last start or end of a turn (at first: when this was made)
        self._changed: anyio.Event | None = None

    @contextmanager
    def turn(self) -> Iterator[None]:
        """A prompt turn runs inside this."""
        self._turns += 1
        self._note(+1)
        try:
            yield
        finally:
            self._note(-1)

    def _note(self, change: int) -> None:
        self._running += change
        self._since = time.monotonic()
        if self._changed is not None:
            self._changed.set()

    async def quiet(self, first: float, then: float) -> None:
        """Return once no turn runs and none has started or ended for `then` seconds; before any turn has run,
        for `first` seconds (the user may be typing the first message)."""
        while True:
            left = math.inf
            if self._running == 0:
                left = self._since + (then if self._turns else first) - time.monotonic()
                if left <= 0:
                    return
            self._changed = anyio.Event()
            with anyio.move_on_after(left):
                await self._changed.wait()
