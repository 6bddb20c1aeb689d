"""What the core knows of the language servers that check the files it edits: the problems they find, and the
session's source of them (`lsp/` runs the servers; the edit tools and the `diagnostics` tool ask it).

A source never fails a tool call: whatever a server does (missing, slow, crashed), its answers say so in a
report, and a wait is bounded by the caller.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

Severity = Literal["error", "warning", "info", "hint"]


@dataclass(frozen=True)
class Problem:
    """One diagnostic: where (1-based line and column), how bad, and what the server said."""

    path: str
    line: int
    column: int
    severity: Severity
    message: str
    code: str | None = None


@dataclass(frozen=True)
class Edit:
    """A file as it was and as the agent left it (None: absent)."""

    path: str
    old_text: str | None
    new_text: str | None


@dataclass(frozen=True)
class EditReport:
    """What one server found of an edit: the problems it introduced (not the files' old ones), how many old
    ones it fixed and how many are left; `late`: the server had not settled within the wait, nothing is known
    yet (the next check compares with the files as they were last reported); `stopped`: the server is gone,
    and why (said once)."""

    checker: str
    paths: tuple[str, ...]
    new: tuple[Problem, ...] = ()
    fixed: int = 0
    remaining: int = 0
    late: bool = False
    starting: bool = False  # late because the server is still starting
    stopped: str | None = None


@dataclass(frozen=True)
class ProblemReport:
    """A file's or a folder's current problems as one server sees them; `late`: the files it had not checked in
    time; `stopped`: the server is gone, and why."""

    checker: str
    checked: tuple[str, ...]
    problems: tuple[Problem, ...] = ()
    late: tuple[str, ...] = ()
    stopped: str | None = None


class Diagnostics(Protocol):
    """A session's language servers: one per language per root, started when first needed, closed with it."""

    edit_wait: float  # how long an edit's result waits for its check (the user's `lsp_wait`)

    def handles(self, path: str) -> bool:
        """Whether a server is configured for `path`'s language (it may still be missing or gone)."""
        ...

    def expect(self, path: str, text: str | None) -> None:
        """An edit of `path` (now `text`) is coming: start its server and check the file as it is, in the
        background, so that the edit's check has less to wait for. Never blocks, never raises."""
        ...

    async def after_edits(self, edits: Sequence[Edit], wait: float) -> list[EditReport]:
        """What the edits introduced, per server; waits at most `wait` seconds. Files no server handles are
        left out."""
        ...

    async def problems(self, files: Sequence[tuple[str, str]], wait: float) -> list[ProblemReport]:
        """The current problems of `files` (path, text), per server; waits at most `wait` seconds."""
        ...

    def missing(self) -> list[str]:
        """What is configured but cannot start (a line each: the language and why), for the `diagnostics` tool."""
        ...

    async def close(self) -> None:
        """Stop every server (bounded): none outlives the session."""
        ...
