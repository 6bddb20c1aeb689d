"""Start one server, see it answer `initialize`, and stop it: `coder-agent doctor`'s check, and its start-up time."""

from __future__ import annotations

import time

import anyio

from .launch import Launch
from .server import LanguageServer


async def probe(how: Launch, timeout: float = 30.0) -> tuple[float | None, str | None]:
    """(seconds to the `initialize` answer, None) or (None, why it did not answer)."""
    server = LanguageServer(how)
    started = time.monotonic()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(server.run)
        with anyio.move_on_after(timeout):
            await server.ready.wait()
        took = time.monotonic() - started
        ready = server.ready.is_set() and server.gone is None
        server.stop()
    if not ready:
        return None, server.gone or f"no answer to initialize within {timeout:g} s"
    return took, None
