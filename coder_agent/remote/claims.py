"""Which connection holds which live session, across all the connections of one server.

A session is live in one connection at a time: another connection asking for it is refused while its holder is
connected, and waits (bounded) while its holder is going away and saving it. A dropped connection lets go of its
sessions once its turns have stopped, so they can be loaded or resumed from anywhere else.
"""

from __future__ import annotations

import anyio


class Claims:
    def __init__(self, release_wait: float) -> None:
        self.release_wait = release_wait
        self._holders: dict[str, Holder] = {}
        self._changed = anyio.Event()

    def holder(self, name: str) -> Holder:
        """The claims of one connection (`name` appears in logs)."""
        return Holder(self, name)

    def held_by(self, session_id: str) -> Holder | None:
        return self._holders.get(session_id)

    def _take(self, session_id: str, holder: Holder) -> bool:
        current = self._holders.get(session_id)
        if current is not None and current is not holder:
            return False
        self._holders[session_id] = holder
        return True

    def _drop(self, session_id: str, holder: Holder) -> None:
        if self._holders.get(session_id) is holder:
            del self._holders[session_id]
            self._changed.set()
            self._changed = anyio.Event()

    async def _wait(self, session_id: str, holder: Holder) -> None:
        with anyio.move_on_after(self.release_wait):
            while True:
                current = self._holders.get(session_id)
                if current is None or current is holder or not current.closing:
                    return
                await self._changed.wait()


class Holder:
    """One connection's side of `Claims`: the `SessionClaims` its `Sessions` asks."""

    def __init__(self, claims: Claims, name: str) -> None:
        self._claims = claims
        self.name = name
        self.closing = False  # the connection has ended; its sessions are let go once its turns have stopped

    def claim(self, session_id: str) -> bool:
        return self._claims._take(session_id, self)

    def release(self, session_id: str) -> None:
        self._claims._drop(session_id, self)

    async def wait_released(self, session_id: str) -> None:
        await self._claims._wait(session_id, self)
