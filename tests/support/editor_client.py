"""The editor profile of the test client: it serves `fs/*` from disk and runs `terminal/*` commands itself.

Like a real editor it offers its buffers (`buffers`: unsaved contents that win over the disk) and keeps
every write and every terminal call in order, so tests can check that the agent went through the editor.
"""

from __future__ import annotations

import os
import signal
import subprocess
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
from acp import RequestError
from acp.schema import (
    ClientCapabilities,
    CreateTerminalResponse,
    EnvVariable,
    FileSystemCapabilities,
    ReadTextFileResponse,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from .recording_client import PermissionPolicy, RecordingClient

EDITOR_CAPABILITIES = ClientCapabilities(
    fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
)


@dataclass
class _Terminal:
    process: anyio.abc.Process
    output: bytearray = field(default_factory=bytearray)
    limit: int | None = None
    truncated: bool = False
    exited: anyio.Event = field(default_factory=anyio.Event)
    released: bool = False

    def exit_fields(self) -> dict[str, Any]:
        code = self.process.returncode
        if code is None:
            return {}
        if code < 0:
            return {"exit_code": None, "signal": signal.Signals(-code).name}
        return {"exit_code": code, "signal": None}


class EditorClient(RecordingClient):
    """A RecordingClient that advertises fs and terminal and serves them for real."""

    capabilities = EDITOR_CAPABILITIES

    def __init__(self, task_group: anyio.abc.TaskGroup, permission: PermissionPolicy = "allow_once") -> None:
        super().__init__(permission)
        self._tg = task_group
        self.buffers: dict[str, str] = {}  # unsaved editor contents, by absolute path
        self.calls: list[tuple[str, dict[str, Any]]] = []  # every fs/terminal call, in order
        self.terminals: dict[str, _Terminal] = {}

    # ---- fs ---------------------------------------------------------------------------------------

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any
    ) -> ReadTextFileResponse:
        self.calls.append(("fs/read_text_file", {"path": path, "line": line, "limit": limit}))
        if not os.path.isabs(path):
            raise RequestError.invalid_params({"path": "must be absolute"})
        if path in self.buffers:
            text = self.buffers[path]
        else:
            try:
                text = await anyio.Path(path).read_text(encoding="utf-8")
            except FileNotFoundError:
                raise RequestError.resource_not_found(path) from None
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = max((line or 1) - 1, 0)
            text = "".join(lines[start : None if limit is None else start + limit])
        return ReadTextFileResponse(content=text)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse | None:
        self.calls.append(("fs/write_text_file", {"path": path, "content": content}))
        if not os.path.isabs(path):
            raise RequestError.invalid_params({"path": "must be absolute"})
        target = anyio.Path(path)
        await target.parent.mkdir(parents=True, exist_ok=True)
        await target.write_text(content, encoding="utf-8")
        self.buffers.pop(path, None)
        return WriteTextFileResponse()

    # ---- terminals --------------------------------------------------------------------------------

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        self.calls.append(("terminal/create", {"command": command, "args": args or [], "cwd": cwd}))
        environment = dict(os.environ) | {variable.name: variable.value for variable in env or []}
        process = await anyio.open_process(
            [command, *(args or [])],
            cwd=cwd,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        terminal_id = f"term_{len(self.terminals) + 1}"
        terminal = _Terminal(process, limit=output_byte_limit)
        self.terminals[terminal_id] = terminal
        self._tg.start_soon(self._pump, terminal)
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def _pump(self, terminal: _Terminal) -> None:
        assert terminal.process.stdout is not None
        async for chunk in terminal.process.stdout:
            terminal.output += chunk
            if terminal.limit is not None and len(terminal.output) > terminal.limit:
                # ACP: truncation drops the beginning.
                del terminal.output[: len(terminal.output) - terminal.limit]
                terminal.truncated = True
        await terminal.process.wait()
        terminal.exited.set()

    def _terminal(self, method: str, terminal_id: str) -> _Terminal:
        self.calls.append((method, {"terminalId": terminal_id}))
        terminal = self.terminals.get(terminal_id)
        if terminal is None or terminal.released:
            raise RequestError.invalid_params({"terminalId": f"unknown terminal {terminal_id}"})
        return terminal

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> TerminalOutputResponse:
        terminal = self._terminal("terminal/output", terminal_id)
        exit_status = terminal.exit_fields() if terminal.exited.is_set() else None
        return TerminalOutputResponse.model_validate(
            {
                "output": terminal.output.decode(errors="replace"),
                "truncated": terminal.truncated,
                "exitStatus": {"exitCode": exit_status.get("exit_code"), "signal": exit_status.get("signal")}
                if exit_status
                else None,
            }
        )

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        terminal = self._terminal("terminal/wait_for_exit", terminal_id)
        await terminal.exited.wait()
        return WaitForTerminalExitResponse(**terminal.exit_fields())

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> None:
        self._kill(self._terminal("terminal/kill", terminal_id))

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> None:
        terminal = self._terminal("terminal/release", terminal_id)
        self._kill(terminal)
        terminal.released = True

    @staticmethod
    def _kill(terminal: _Terminal) -> None:
        if terminal.process.returncode is None:
            try:
                os.killpg(terminal.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def methods(self) -> list[str]:
        return [method for method, _ in self.calls]
