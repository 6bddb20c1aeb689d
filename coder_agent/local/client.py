"""`LocalClient`: this machine alone as the agent core's `Client`, for a run with no editor (`coder-agent run`).

Files are the disk's (`files`), commands run as local process groups (`terminals`), which no editor shows:
with `live_output`, the run's own view watches them instead (`output_of`), as an editor watches its terminals.
Updates go to a callback (the run's output); permission questions, which the session's mode decides to ask,
go to a `PermissionPolicy`; the questions the agent asks the user (`elicitation/create`'s forms and URLs) to
`Questions` when someone is there to answer them (a terminal), and are otherwise refused as unanswerable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import anyio.abc
from pydantic import TypeAdapter

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
from ..agent.errors import ClientError
from .files import LocalFiles
from .terminals import LocalTerminals

_UPDATE = TypeAdapter[SessionUpdate](SessionUpdate)


class PermissionPolicy(Protocol):
    async def decide(self, tool_call: ToolCallFields, options: Sequence[PermissionOption]) -> PermissionOutcome: ...


class Questions(Protocol):
    """Someone on this machine who answers the agent's questions (a person at the terminal)."""

    def modes(self) -> frozenset[ElicitationMode]: ...

    async def ask(self, request: CreateElicitationRequest) -> CreateElicitationResponse: ...

    async def completed(self, elicitation_id: str) -> None: ...


class LocalClient:
    def __init__(
        self,
        on_update: Callable[[SessionUpdate], None],
        permissions: PermissionPolicy,
        tasks: anyio.abc.TaskGroup,
        questions: Questions | None = None,
        live_output: bool = False,
    ) -> None:
        """`tasks` runs the terminals' output pumps; it must outlive every terminal. Without `questions`, nobody
        can be asked anything (a run with no terminal, or with `--yes`). `live_output`: the run shows what
        commands print as it comes (`output_of`), so the tools embed their terminals in the tool calls."""
        self._on_update = on_update
        self._permissions = permissions
        self._questions = questions
        self._files = LocalFiles()
        self._terminals = LocalTerminals(tasks)
        self._live_output = live_output
        self._released: dict[str, str] = {}  # a watched terminal's whole output, until the view has shown it

    async def session_update(self, session_id: str, update: SessionUpdate) -> None:
        self._on_update(update)

    async def replay_updates(self, session_id: str, updates_json: Sequence[bytes]) -> None:
        for body in updates_json:  # a headless run resumes without replay; this is for completeness
            self._on_update(_UPDATE.validate_json(body))

    async def request_permission(
        self, session_id: str, tool_call: ToolCallFields, options: Sequence[PermissionOption]
    ) -> PermissionOutcome:
        return await self._permissions.decide(tool_call, options)

    def can_ask_user(self) -> bool:
        return self._questions is not None

    def elicitation_modes(self) -> frozenset[ElicitationMode]:
        return self._questions.modes() if self._questions is not None else frozenset()

    async def create_elicitation(self, request: CreateElicitationRequest) -> CreateElicitationResponse:
        if self._questions is None or request.mode not in self._questions.modes():
            raise ClientError("nobody is at a terminal to answer")
        return await self._questions.ask(request)

    async def complete_elicitation(self, elicitation_id: str) -> None:
        if self._questions is not None:
            await self._questions.completed(elicitation_id)

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None
    ) -> str:
        return await self._files.read_text_file(session_id, path, line, limit)

    async def write_text_file(self, session_id: str, path: str, content: str) -> None:
        await self._files.write_text_file(session_id, path, content)

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: Sequence[str] = (),
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        output_byte_limit: int | None = None,
    ) -> str:
        return await self._terminals.create_terminal(session_id, command, args, cwd, env, output_byte_limit)

    def takes_compaction_updates(self) -> bool:
        return False  # the run's own view shows a compaction as a tool call

    def shows_terminal(self, terminal_id: str) -> bool:
        return self._live_output  # else nobody watches it: the tool shows its output when it is done

    def output_of(self, terminal_id: str, done: bool) -> str | None:
        """What a watched terminal printed so far (None: nothing known of it); `done`: all of it, and forget it."""
        if done:
            return self._released.pop(terminal_id, None) or self._terminals.output_now(terminal_id)
        return self._released.get(terminal_id) or self._terminals.output_now(terminal_id)

    async def terminal_output(self, session_id: str, terminal_id: str) -> TerminalOutputResponse:
        return await self._terminals.terminal_output(session_id, terminal_id)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str) -> TerminalExitStatus:
        return await self._terminals.wait_for_terminal_exit(session_id, terminal_id)

    async def kill_terminal(self, session_id: str, terminal_id: str) -> None:
        await self._terminals.kill_terminal(session_id, terminal_id)

    async def release_terminal(self, session_id: str, terminal_id: str) -> None:
        if self._live_output:  # released before the call's last update: the view reads its output then
            output = self._terminals.output_now(terminal_id)
            if output is not None:
                self._released[terminal_id] = output
        await self._terminals.release_terminal(session_id, terminal_id)
