"""The `Client` seam: everything the agent core asks of whoever drives it (an editor, or the headless CLI)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ..acp.schema import (
    CreateElicitationRequest,
    CreateElicitationResponse,
    ElicitationMode,
    PermissionOption,
    PermissionOutcome,
    SessionUpdate,
    TerminalExitStatus,
    TerminalOutputResponse,
    ToolCallFields,
)

META_KEY = "coder-agent"  # our part of a `_meta` object


class Client(Protocol):
    """The user's side of a session: an editor with the local machine filling in (`local.FillIn`), or the
    local machine alone (`local.LocalClient`); the core never knows which, and calls every method freely.

    Files and terminals have the semantics of ACP's `fs/*` and `terminal/*` methods, wherever they are served.
    A failure of the client is a `ClientError` (`ClientGone` once it is unreachable), which fails the one
    operation that needed it. The local disk fails with its own `OSError`s instead (`FileNotFoundError`,
    `PermissionError` ...), and a command that cannot start locally with `OSError`.
    """

    async def session_update(self, session_id: str, update: SessionUpdate) -> None:
        """Stream one update to the user."""
        ...

    async def replay_updates(self, session_id: str, updates_json: Sequence[bytes]) -> None:
        """Send again updates stored as JSON, in order (replaying a loaded session)."""
        ...

    async def request_permission(
        self, session_id: str, tool_call: ToolCallFields, options: Sequence[PermissionOption]
    ) -> PermissionOutcome:
        """Ask the user whether a tool call may run."""
        ...

    def can_ask_user(self) -> bool:
        """Whether a person can answer questions now: in an editor always (a permission request at least); in a
        headless run only on a terminal, and not with `--yes`."""
        ...

    def elicitation_modes(self) -> frozenset[ElicitationMode]:
        """The elicitation modes the user can be asked in (`form`, `url`): an editor's advertised ones."""
        ...

    async def create_elicitation(self, request: CreateElicitationRequest) -> CreateElicitationResponse:
        """Ask the user through a form or a URL, in a mode `elicitation_modes` has (else `ClientError`). The
        answer's content is not checked here: `ElicitationSchema.check` does that against the form sent."""
        ...

    async def complete_elicitation(self, elicitation_id: str) -> None:
        """Tell the user that the out-of-band step of a URL elicitation is done."""
        ...

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None
    ) -> str:
        """A text file as the user sees it (an editor's unsaved buffers included), from `line` (1-based) for
        `limit` lines when given."""
        ...

    async def write_text_file(self, session_id: str, path: str, content: str) -> None:
        """Create or replace a file (an editor shows the change in its review of changes)."""
        ...

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: Sequence[str] = (),
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        output_byte_limit: int | None = None,
    ) -> str:
        """Start a command in a terminal; returns its id at once. Every terminal must be released."""
        ...

    def shows_terminal(self, terminal_id: str) -> bool:
        """Whether the user watches this terminal live in the editor: only then may a tool call embed it
        (`TerminalContent`). An editor must never be sent the id of a terminal it does not know."""
        ...

    def takes_compaction_updates(self) -> bool:
        """Whether the client advertised `session.compaction` (unstable): only then may it be sent
        `compaction_update`s; otherwise a compaction is shown as a tool call."""
        ...

    async def terminal_output(self, session_id: str, terminal_id: str) -> TerminalOutputResponse:
        """The output so far (its end, when it outgrew the limit), and the exit status once it exited."""
        ...

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str) -> TerminalExitStatus: ...

    async def kill_terminal(self, session_id: str, terminal_id: str) -> None:
        """Kill the command; the terminal stays readable until released."""
        ...

    async def release_terminal(self, session_id: str, terminal_id: str) -> None:
        """Kill the command if it still runs, and forget the terminal."""
        ...


def dropped_bytes_meta(count: int) -> dict[str, Any]:
    """The `_meta` of a `terminal_output` whose terminal knows how many bytes of the start it dropped."""
    return {META_KEY: {"droppedBytes": count}}


def dropped_bytes(output: TerminalOutputResponse) -> int | None:
    """How many bytes of the start a terminal dropped, when it says (a local one does; editors do not)."""
    ours = (output.meta or {}).get(META_KEY)
    count = ours.get("droppedBytes") if isinstance(ours, dict) else None
    return count if isinstance(count, int) and not isinstance(count, bool) else None
