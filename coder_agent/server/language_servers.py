"""Each session's language servers, as the user's settings describe them (`lsp/`): made with the session, started
only when an edit or the `diagnostics` tool first needs one, in the connection's background tasks (so they end
with it), and stopped when the session closes."""

from __future__ import annotations

import logging
from collections.abc import Callable

import anyio.abc

from ..agent.diagnostics import Diagnostics
from ..agent.sessions.session import Session
from ..config.settings import Settings

log = logging.getLogger(__name__)


def diagnostics_factory(
    settings: Callable[[], Settings], background: anyio.abc.TaskGroup
) -> Callable[[Session], Diagnostics | None]:
    said: set[str] = set()

    def make(session: Session) -> Diagnostics | None:
        current = settings()
        if not current.language_servers:
            return None
        from ..lsp.session import SessionServers  # imported with the first session, never before `initialize`
        from ..lsp.specs import configured

        specs, problems = configured(current.lsp)
        for problem in problems:
            if problem not in said:
                said.add(problem)
                log.warning("%s", problem)
        return SessionServers(specs, lambda: session.roots, background, current.lsp_wait)

    return make
