"""What a session's first model call needs, loaded in the background as soon as the session exists.

The built-in tools' modules and httpx for every session (a few hundred milliseconds, in worker threads); and, when
the session's model is one only litellm speaks (`llm.factory.needs_litellm`: Bedrock, Vertex, Azure ...), litellm
itself, at once: its ~2 s import then runs while the user types the first message, not after it. A model the agent
speaks itself never imports litellm at all.
"""

from __future__ import annotations

import logging

import anyio
import anyio.abc

from ..agent.prompting import Turns
from ..config.settings import Settings

log = logging.getLogger(__name__)


class Preload:
    def __init__(self, background: anyio.abc.TaskGroup, turns: Turns) -> None:
        self._background = background
        self._turns = turns
        self._started = False
        self._litellm = False
        self._language_servers = False

    def start(self, model: str | None, settings: Settings) -> None:
        """For a session of `model` (made, loaded, resumed, forked or switched to it)."""
        if model is None:
            return
        self._language_servers = settings.language_servers
        from ..llm.factory import needs_litellm

        litellm = not self._litellm and needs_litellm(model, settings.api_base, settings.environ)
        self._litellm = self._litellm or litellm
        if not self._started:
            self._started = True
            self._background.start_soon(self._load, model, litellm)
        elif litellm:
            self._background.start_soon(self._load_litellm, model)

    async def _load(self, model: str, litellm: bool) -> None:
        """One after the other, each in a worker thread: imports in parallel threads only fight for the interpreter
        (a long-tail first prompt waited ~1.7x as long for litellm when the tools were imported beside it)."""
        if litellm:
            await self._load_litellm(model)
        from ..llm import http_client

        # The tools' modules and httpx, off the event loop; an agent that exits meanwhile does not wait for them.
        await anyio.to_thread.run_sync(self._turns.builtin, abandon_on_cancel=True)
        await anyio.to_thread.run_sync(http_client.prepare, abandon_on_cancel=True)
        if self._language_servers:  # what the first edit's check imports (no server is started here)
            await anyio.to_thread.run_sync(_import_language_servers, abandon_on_cancel=True)

    async def _load_litellm(self, model: str) -> None:
        from ..llm.loader import load_litellm

        log.debug("%s goes through litellm: importing it now", model)
        await load_litellm()


def _import_language_servers() -> None:
    import coder_agent.lsp.session  # noqa: F401
