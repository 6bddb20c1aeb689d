"""Session methods the client calls on the agent: new, load, prompt, cancel, modes and config options."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from .base import Wire
from .content import ContentBlock


class EnvVariable(Wire):
    name: str
    value: str


class HttpHeader(Wire):
    name: str
    value: str


class McpServerStdio(Wire):
    name: str
    command: str
    args: list[str] = Field(default_factory=list)
    env: list[EnvVariable] = Field(default_factory=list)


class McpServerHttp(Wire):
    type: Literal["http"]
    name: str
    url: str
    headers: list[HttpHeader] = Field(default_factory=list)


class McpServerSse(Wire):
    type: Literal["sse"]
    name: str
    url: str
    headers: list[HttpHeader] = Field(default_factory=list)


# stdio servers carry no `type` in v1, so this is a left-to-right union, not a discriminated one.
McpServer = Annotated[McpServerHttp | McpServerSse | McpServerStdio, Field(union_mode="left_to_right")]


class NewSessionRequest(Wire):
    cwd: str
    mcp_servers: list[McpServer]
    additional_directories: list[str] = Field(default_factory=list)


class LoadSessionRequest(Wire):
    session_id: str
    cwd: str
    mcp_servers: list[McpServer]
    additional_directories: list[str] | None = None  # None: as stored


class SessionMode(Wire):
    id: str
    name: str
    description: str | None = None


class SessionModeState(Wire):
    current_mode_id: str
    available_modes: list[SessionMode]


class SelectOption(Wire):
    value: str
    name: str
    description: str | None = None


class SessionConfigSelect(Wire):
    type: Literal["select"] = "select"
    id: str
    name: str
    description: str | None = None
    category: str | None = None
    current_value: str
    options: list[SelectOption]


class NewSessionResponse(Wire):
    session_id: str
    modes: SessionModeState | None = None
    config_options: list[SessionConfigSelect] | None = None


class SessionStateResponse(Wire):
    """The result of `session/load` and `session/resume`."""

    modes: SessionModeState | None = None
    config_options: list[SessionConfigSelect] | None = None


class PromptRequest(Wire):
    session_id: str
    prompt: list[ContentBlock]


StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]


class PromptResponse(Wire):
    stop_reason: StopReason


class SessionIdParams(Wire):
    """Params that name just a session: `session/cancel`, `session/close`, `session/delete`."""

    session_id: str


class SetSessionModeRequest(Wire):
    session_id: str
    mode_id: str


class SetConfigOptionRequest(Wire):
    session_id: str
    config_id: str
    value: str | bool
    type: str | None = None


class SetConfigOptionResponse(Wire):
    config_options: list[SessionConfigSelect]


class ResumeSessionRequest(Wire):
    """`session/resume` and `session/fork`: like load, but `mcpServers` is optional."""

    session_id: str
    cwd: str
    mcp_servers: list[McpServer] = Field(default_factory=list)
    additional_directories: list[str] | None = None  # None: as stored


class ForkSessionResponse(Wire):
    session_id: str
    modes: SessionModeState | None = None
    config_options: list[SessionConfigSelect] | None = None


class ListSessionsRequest(Wire):
    cwd: str | None = None
    cursor: str | None = None


class SessionInfo(Wire):
    session_id: str
    cwd: str
    additional_directories: list[str] | None = None
    title: str | None = None
    updated_at: str | None = None


class ListSessionsResponse(Wire):
    sessions: list[SessionInfo]
    next_cursor: str | None = None
