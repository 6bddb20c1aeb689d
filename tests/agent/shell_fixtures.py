"""Fakes and helpers for the shell, command and search tests.

`TerminalEditor` is an editor that offers terminals and really runs each one's command locally (in its own
process group), recording every call in order; `NoTerminalClient` offers nothing, so the agent runs commands
itself. Both record `progress` in the same call log, so a test can check the whole order of a terminal's life.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process, TaskGroup

from coder_agent.acp.schema import (
    ClientCapabilities,
    SessionUpdate,
    TerminalExitStatus,
    TerminalOutputResponse,
    ToolCallContent,
)
from coder_agent.agent.errors import ClientError
from coder_agent.agent.files import Files
from coder_agent.agent.tools.base import Tool, ToolContext, ToolResult

SESSION = "sess-shell"


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


@dataclass
class _Terminal:
    process: Process
    limit: int | None
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    exited: anyio.Event = field(default_factory=anyio.Event)
    released: bool = False


class TerminalEditor(NoTerminalClient):
    """Advertises `terminal` and runs each terminal's command for real, like an editor would."""

    def __init__(self, tasks: TaskGroup, fail_output: bool = False) -> None:
        super().__init__()
        self.capabilities = ClientCapabilities(terminal=True)
        self.tasks = tasks
        self.fail_output = fail_output
        self.created: list[dict[str, Any]] = []
        self.terminals: dict[str, _Terminal] = {}
        self.waiting = anyio.Event()  # set when the agent starts waiting for an exit

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: Any = (),
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        output_byte_limit: int | None = None,
    ) -> str:
        assert session_id == SESSION
        self.calls.append("create")
        self.created.append({"command": command, "args": list(args), "cwd": cwd, "limit": output_byte_limit})
        process = await anyio.open_process(
            [command, *args],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        terminal_id = f"term-{len(self.created)}"
        self.terminals[terminal_id] = terminal = _Terminal(process, output_byte_limit)
        self.tasks.start_soon(self._watch, terminal)
        return terminal_id

    async def _watch(self, terminal: _Terminal) -> None:
        assert terminal.process.stdout is not None
        async for chunk in terminal.process.stdout:
            terminal.output += chunk
            if terminal.limit is not None and len(terminal.output) > terminal.limit:
                del terminal.output[: len(terminal.output) - terminal.limit]
                terminal.truncated = True
        await terminal.process.wait()
        terminal.exited.set()

    def _get(self, terminal_id: str) -> _Terminal:
        terminal = self.terminals.get(terminal_id)
        if terminal is None or terminal.released:
            raise ClientError(f"unknown terminal {terminal_id}", -32602)
        return terminal

    def _status(self, terminal: _Terminal) -> TerminalExitStatus:
        code = terminal.process.returncode
        assert code is not None
        if code < 0:
            return TerminalExitStatus(signal=signal.Signals(-code).name)
        return TerminalExitStatus(exit_code=code)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str) -> TerminalExitStatus:
        self.calls.append("wait")
        terminal = self._get(terminal_id)
        self.waiting.set()
        await terminal.exited.wait()
        return self._status(terminal)

    async def terminal_output(self, session_id: str, terminal_id: str) -> TerminalOutputResponse:
        self.calls.append("output")
        terminal = self._get(terminal_id)
        if self.fail_output:
            raise ClientError("the terminal broke", -32603)
        with anyio.fail_after(5):  # a killed command: let its exit be seen
            await terminal.exited.wait()
        return TerminalOutputResponse(
            output=terminal.output.decode("utf-8", errors="replace"),
            truncated=terminal.truncated,
            exit_status=self._status(terminal),
        )

    async def kill_terminal(self, session_id: str, terminal_id: str) -> None:
        self.calls.append("kill")
        self._kill(self._get(terminal_id))

    async def release_terminal(self, session_id: str, terminal_id: str) -> None:
        self.calls.append("release")
        terminal = self._get(terminal_id)
        self._kill(terminal)
        terminal.released = True

    def _kill(self, terminal: _Terminal) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(terminal.process.pid, signal.SIGKILL)


@contextlib.asynccontextmanager
async def terminal_editor(fail_output: bool = False) -> AsyncIterator[TerminalEditor]:
    async with anyio.create_task_group() as tasks:
        editor = TerminalEditor(tasks, fail_output)
        try:
            yield editor
        finally:
            for terminal in editor.terminals.values():
                editor._kill(terminal)
            with anyio.move_on_after(5, shield=True):
                for terminal in editor.terminals.values():
                    await terminal.exited.wait()
            tasks.cancel_scope.cancel()


def make_ctx(client: NoTerminalClient, cwd: Path) -> ToolContext:
    async def emit(update: SessionUpdate) -> None:
        client.emitted.append(update)

    async def progress(content: list[ToolCallContent]) -> None:
        client.calls.append("progress")
        client.progressed.append(content)

    client_: Any = client
    return ToolContext(SESSION, str(cwd), [str(cwd)], client_, Files(client_, SESSION), emit, progress)


async def call(tool: Tool[Any], ctx: ToolContext, **arguments: Any) -> ToolResult:
    """Parse, prepare and run one call, as the turn does once the call is allowed."""
    args = tool.parse(arguments)
    return await tool.run(args, await tool.prepare(args, ctx), ctx)


def alive(pid: int) -> bool:
    """Whether `pid` is a process that has not exited (a zombie has)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat[stat.rfind(")") + 2] not in "ZX"


def alive_in_group(pgid: int) -> list[int]:
    """The live processes of process group `pgid`, read from /proc independently of the code under test."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (FileNotFoundError, ProcessLookupError, IndexError):
                continue
            if int(fields[2]) == pgid and fields[0] not in "ZX":
                found.append(int(entry.name))
    return found


async def read_fifo(path: Path, timeout: float = 5.0) -> str:
    """What a command writes into the named pipe at `path` (which it opens once it is ready)."""
    try:
        with anyio.fail_after(timeout):
            return await anyio.to_thread.run_sync(path.read_text, abandon_on_cancel=True)
    finally:  # a reader still blocked in open(): give it a writer so its thread ends
        with contextlib.suppress(OSError):
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "ready.fifo"
    os.mkfifo(path)
    return path


@pytest.fixture
def local_ctx(tmp_path: Path) -> ToolContext:
    """A session in `tmp_path` whose editor offers no terminal."""
    return make_ctx(NoTerminalClient(), tmp_path)
