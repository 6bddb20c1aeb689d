"""Each session's language servers, as the user's settings describe them (`lsp/`): made with the session, started
only when an edit or the `diagnostics` tool first needs one, in the connection's background tasks (so they end
with it), and stopped when the session closes. `session/new` imports nothing of `lsp/` (about 40 ms): the first
question does, or the preload after `session/new` (`preload.py`)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import anyio.abc

from ..agent.diagnostics import Diagnostics, Edit, EditReport, ProblemReport
from ..agent.sessions.session import Session
from ..config.settings import Settings

log = logging.getLogger(__name__)


class _Lazy:
    """A session's language servers, made at the first question."""

    def __init__(self, make: Callable[[], Diagnostics], edit_wait: float) -> None:
        self._make = make
        self._made: Diagnostics | None = None
        self.edit_wait = edit_wait

    def _servers(self) -> Diagnostics:
        if self._made is None:
            self._made = self._make()
        return self._made

    def handles(self, path: str) -> bool:
        return self._servers().handles(path)

    def expect(self, path: str, text: str | None) -> None:
        self._servers().expect(path, text)

    async def after_edits(self, edits: Sequence[Edit], wait: float) -> list[EditReport]:
        return await self._servers().after_edits(edits, wait)

    async def problems(self, files: Sequence[tuple[str, str]], wait: float) -> list[ProblemReport]:
        return await self._servers().problems(files, wait)

    def missing(self) -> list[str]:
        return self._servers().missing()

    async def close(self) -> None:
        if self._made is not None:
            await self._made.close()


def diagnostics_factory(
    settings: Callable[[], Settings], background: anyio.abc.TaskGroup
) -> Callable[[Session], Diagnostics | None]:
    said: set[str] = set()

    def make(session: Session) -> Diagnostics | None:
        current = settings()
        if not current.language_servers:
            return None

        def servers() -> Diagnostics:
            from ..lsp.session import SessionServers
            from ..lsp.specs import configured

            specs, problems = configured(current.lsp)
            for problem in problems:
                if problem not in said:
                    said.add(problem)
                    log.warning("%s", problem)
            return SessionServers(specs, lambda: session.roots, background, current.lsp_wait)

        return _Lazy(servers, current.lsp_wait)

    return make
