"""Methods the agent calls on the client: permission, file system and terminals."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import Wire
from .session import EnvVariable
from .updates import ToolCallFields

PermissionKind = Literal["allow_once", "allow_always", "reject_once", "reject_always"]


class PermissionOption(Wire):
    option_id: str
    name: str
    kind: PermissionKind


class RequestPermissionRequest(Wire):
    session_id: str
    tool_call: ToolCallFields
    options: list[PermissionOption]


class PermissionOutcome(Wire):
    outcome: Literal["selected", "cancelled"]
    option_id: str | None = None


class RequestPermissionResponse(Wire):
    outcome: PermissionOutcome


class ReadTextFileRequest(Wire):
    session_id: str
    path: str
    line: int | None = None
    limit: int | None = None


class ReadTextFileResponse(Wire):
    content: str


class WriteTextFileRequest(Wire):
    session_id: str
    path: str
    content: str


class CreateTerminalRequest(Wire):
    session_id: str
    command: str
    args: list[str] = Field(default_factory=list)
    env: list[EnvVariable] = Field(default_factory=list)
    cwd: str | None = None
    output_byte_limit: int | None = None


class CreateTerminalResponse(Wire):
    terminal_id: str


class TerminalRequest(Wire):
    """Params of terminal/output, wait_for_exit, kill and release."""

    session_id: str
    terminal_id: str


class TerminalExitStatus(Wire):
    exit_code: int | None = None
    signal: str | None = None


class TerminalOutputResponse(Wire):
    output: str
    truncated: bool
    exit_status: TerminalExitStatus | None = None
