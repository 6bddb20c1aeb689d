"""Fakes and helpers for the command, plan and search tests.

`TerminalEditor` is an editor that offers terminals and serves them with the local terminals (each command a
process group of its own), recording every call in order; `NoTerminalClient` offers nothing, so the local
terminals serve the agent directly (`local.FillIn`). Both record `progress` in the same call log, so a test
can check the whole order of a terminal's life.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest

from coder_agent.acp.schema import (
    ClientCapabilities,
    SessionUpdate,
    TerminalExitStatus,
    TerminalOutputResponse,
    ToolCallContent,
)
from coder_agent.agent.errors import ClientError
from coder_agent.local.terminals import LocalTerminals
from tests.support.processes import alive, alive_in_group, fifo, read_fifo

from .contexts import FakeContext, call, make_context

SESSION = "sess-shell"
__all__ = ["alive", "alive_in_group", "call", "fifo", "read_fifo"]


class NoTerminalClient:
    """Advertises nothing: the agent must run commands itself and never call terminal/*."""

    def __init__(self) -> None:
        self.capabilities = ClientCapabilities()
        self.calls: list[str] = []
        self.progressed: list[list[ToolCallContent]] = []
        self.emitted: list[SessionUpdate] = []

    async def session_update(self, session_id: str, update: SessionUpdate) -> None:
        self.emitted.append(update)

    async def create_terminal(self, *args: Any, **kwargs: Any) -> str:
        raise AssertionError("terminal/create was not advertised")


class TerminalEditor(NoTerminalClient):
    """Advertises `terminal` and runs each terminal's command for real, with the local terminals."""

    def __init__(self, tasks: anyio.abc.TaskGroup, fail_output: bool = False) -> None:
        super().__init__()
        self.capabilities = ClientCapabilities(terminal=True)
        self.fail_output = fail_output
        self.created: list[dict[str, Any]] = []
        self.waiting = anyio.Event()  # set when the agent starts waiting for an exit
        self._local = LocalTerminals(tasks)
        self._ids: dict[str, str] = {}  # our terminal id -> the local terminal's

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: Sequence[str] = (),
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        output_byte_limit: int | None = None,
    ) -> str:
        assert session_id == SESSION
        self.calls.append("create")
        self.created.append({"command": command, "args": list(args), "cwd": cwd, "limit": output_byte_limit})
        terminal_id = f"term-{len(self.created)}"
        self._ids[terminal_id] = await self._local.create_terminal(
            session_id, command, args, cwd, env, output_byte_limit
        )
        return terminal_id

    def takes_compaction_updates(self) -> bool:
        return False

    def shows_terminal(self, terminal_id: str) -> bool:
        return terminal_id in self._ids

    def _local_id(self, terminal_id: str) -> str:
        if terminal_id not in self._ids:
            raise ClientError(f"unknown terminal {terminal_id}", -32602)
        return self._ids[terminal_id]

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str) -> TerminalExitStatus:
        self.calls.append("wait")
        local = self._local_id(terminal_id)
        self.waiting.set()
        return await self._local.wait_for_terminal_exit(session_id, local)

    async def terminal_output(self, session_id: str, terminal_id: str) -> TerminalOutputResponse:
        self.calls.append("output")
        local = self._local_id(terminal_id)
        if self.fail_output:
            raise ClientError("the terminal broke", -32603)
        output = await self._local.terminal_output(session_id, local)
        return output.model_copy(update={"meta": None})  # an editor does not say what it dropped

    async def kill_terminal(self, session_id: str, terminal_id: str) -> None:
        self.calls.append("kill")
        await self._local.kill_terminal(session_id, self._local_id(terminal_id))

    async def release_terminal(self, session_id: str, terminal_id: str) -> None:
        self.calls.append("release")
        await self._local.release_terminal(session_id, self._local_id(terminal_id))
        del self._ids[terminal_id]

    def live_ids(self) -> list[str]:
        return list(self._ids)


def make_ctx(client: NoTerminalClient, cwd: Path, tasks: anyio.abc.TaskGroup) -> FakeContext:
    async def emit(update: SessionUpdate) -> None:
        client.emitted.append(update)

    async def progress(content: list[ToolCallContent]) -> None:
        client.calls.append("progress")
        client.progressed.append(content)

    return make_context(client, SESSION, cwd, tasks, emit, progress)


@asynccontextmanager
async def terminal_editor(cwd: Path, fail_output: bool = False) -> AsyncIterator[tuple[TerminalEditor, FakeContext]]:
    """An editor with terminals, and a session's context in `cwd` that uses it; every terminal ends with it."""
    async with anyio.create_task_group() as tasks:
        editor = TerminalEditor(tasks, fail_output)
        yield editor, make_ctx(editor, cwd, tasks)
        tasks.cancel_scope.cancel()


@asynccontextmanager
async def bare_session(cwd: Path) -> AsyncIterator[tuple[NoTerminalClient, FakeContext]]:
    """An editor with no terminal, and a session's context in `cwd`: commands run as local process groups."""
    async with anyio.create_task_group() as tasks:
        client = NoTerminalClient()
        yield client, make_ctx(client, cwd, tasks)
        tasks.cancel_scope.cancel()


@pytest.fixture
def local_ctx(tmp_path: Path, tasks: anyio.abc.TaskGroup) -> FakeContext:
    """A session in `tmp_path` whose editor offers no terminal."""
    return make_ctx(NoTerminalClient(), tmp_path, tasks)
