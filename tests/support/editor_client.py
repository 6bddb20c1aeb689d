"""The editor profile of the test client: it serves `fs/*` and `terminal/*` with the agent's own local client parts.

Like a real editor it offers its buffers (`buffers`: unsaved contents that win over the disk) and keeps
every write and every terminal call in order, so tests can check that the agent went through the editor.
Files are read and written as `coder_agent.local.files` does, and terminals run as `local.terminals` runs
them (each command a process group of its own); only the protocol around them is the editor's.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable
from typing import Any, TypeVar

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

from coder_agent.agent.errors import ClientError
from coder_agent.local.files import LocalFiles, page
from coder_agent.local.terminals import LocalTerminals

from .recording_client import PermissionPolicy, RecordingClient

EDITOR_CAPABILITIES = ClientCapabilities(
    fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
)
T = TypeVar("T")


async def _known(call: Awaitable[T], terminal_id: str) -> T:
    """The local terminal's answer; an unknown (or released) terminal is the client's invalid params."""
    try:
        return await call
    except ClientError:
        raise RequestError.invalid_params({"terminalId": f"unknown terminal {terminal_id}"}) from None


class EditorClient(RecordingClient):
    """A RecordingClient that advertises fs and terminal and serves them for real."""

    capabilities = EDITOR_CAPABILITIES

    def __init__(self, task_group: anyio.abc.TaskGroup, permission: PermissionPolicy = "allow_once") -> None:
        super().__init__(permission)
        self.buffers: dict[str, str] = {}  # unsaved editor contents, by absolute path
        self.calls: list[tuple[str, dict[str, Any]]] = []  # every fs/terminal call, in order
        self._files = LocalFiles()
        # An editor's terminal gets the editor's environment, and never the agent's credentials.
        self._terminals = LocalTerminals(task_group, environment=os.environ)

    # ---- fs ---------------------------------------------------------------------------------------

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any
    ) -> ReadTextFileResponse:
        self.calls.append(("fs/read_text_file", {"path": path, "line": line, "limit": limit}))
        if not os.path.isabs(path):
            raise RequestError.invalid_params({"path": "must be absolute"})
        if path in self.buffers:
            return ReadTextFileResponse(content=page(self.buffers[path], line, limit))
        try:
            text = await self._files.read_text_file(session_id, path, line, limit)
        except (FileNotFoundError, IsADirectoryError):
            raise RequestError.resource_not_found(path) from None
        return ReadTextFileResponse(content=text)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse | None:
        self.calls.append(("fs/write_text_file", {"path": path, "content": content}))
        if not os.path.isabs(path):
            raise RequestError.invalid_params({"path": "must be absolute"})
        await self._files.write_text_file(session_id, path, content)
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
        variables = {variable.name: variable.value for variable in env or []}
        terminal_id = await self._terminals.create_terminal(
            session_id, command, args or [], cwd, variables, output_byte_limit
        )
        return CreateTerminalResponse(terminal_id=terminal_id)

    def _record(self, method: str, terminal_id: str) -> None:
        self.calls.append((method, {"terminalId": terminal_id}))

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> TerminalOutputResponse:
        self._record("terminal/output", terminal_id)
        result = await _known(self._terminals.terminal_output(session_id, terminal_id), terminal_id)
        return TerminalOutputResponse.model_validate(result.wire() | {"_meta": None})

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        self._record("terminal/wait_for_exit", terminal_id)
        status = await _known(self._terminals.wait_for_terminal_exit(session_id, terminal_id), terminal_id)
        return WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> None:
        self._record("terminal/kill", terminal_id)
        await _known(self._terminals.kill_terminal(session_id, terminal_id), terminal_id)

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> None:
        self._record("terminal/release", terminal_id)
        await _known(self._terminals.release_terminal(session_id, terminal_id), terminal_id)

    def methods(self) -> list[str]:
        return [method for method, _ in self.calls]
