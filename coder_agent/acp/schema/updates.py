"""`session/update` notifications: the agent's running account of a turn. Discriminated by `sessionUpdate`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from .base import Wire
from .content import ContentBlock
from .session import SessionConfigSelect

ToolKind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"]
ToolCallStatus = Literal["pending", "in_progress", "completed", "failed"]


class ContentToolCallContent(Wire):
    type: Literal["content"] = "content"
    content: ContentBlock


class DiffContent(Wire):
    type: Literal["diff"] = "diff"
    path: str
    old_text: str | None
    new_text: str

    @model_serializer(mode="wrap")
    def _keep_null_old_text(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        data["oldText"] = self.old_text  # null means "a new file": keep it on the wire
        return data


class TerminalContent(Wire):
    type: Literal["terminal"] = "terminal"
    terminal_id: str


ToolCallContent = ContentToolCallContent | DiffContent | TerminalContent


class ToolCallLocation(Wire):
    path: str
    line: int | None = None


class UserMessageChunk(Wire):
    session_update: Literal["user_message_chunk"] = "user_message_chunk"
    content: ContentBlock
    message_id: str | None = None


class AgentMessageChunk(Wire):
    session_update: Literal["agent_message_chunk"] = "agent_message_chunk"
    content: ContentBlock
    message_id: str | None = None


class AgentThoughtChunk(Wire):
    session_update: Literal["agent_thought_chunk"] = "agent_thought_chunk"
    content: ContentBlock
    message_id: str | None = None


class ToolCallStart(Wire):
    session_update: Literal["tool_call"] = "tool_call"
    tool_call_id: str
    title: str
    kind: ToolKind = "other"
    status: ToolCallStatus = "pending"
    content: list[ToolCallContent] = Field(default_factory=list)
    locations: list[ToolCallLocation] = Field(default_factory=list)
    raw_input: Any = None
    raw_output: Any = None


class ToolCallFields(Wire):
    """A tool call's changed fields: the body of `tool_call_update`, and a permission request's `toolCall`."""

    tool_call_id: str
    title: str | None = None
    kind: ToolKind | None = None
    status: ToolCallStatus | None = None
    content: list[ToolCallContent] | None = None
    locations: list[ToolCallLocation] | None = None
    raw_input: Any = None
    raw_output: Any = None


class ToolCallProgress(ToolCallFields):
    session_update: Literal["tool_call_update"] = "tool_call_update"


class PlanEntry(Wire):
    content: str
    priority: Literal["high", "medium", "low"]
    status: Literal["pending", "in_progress", "completed"]


class PlanUpdate(Wire):
    session_update: Literal["plan"] = "plan"
    entries: list[PlanEntry]


class CurrentModeUpdate(Wire):
    session_update: Literal["current_mode_update"] = "current_mode_update"
    current_mode_id: str


class ConfigOptionUpdate(Wire):
    session_update: Literal["config_option_update"] = "config_option_update"
    config_options: list[SessionConfigSelect]


class SessionInfoUpdate(Wire):
    session_update: Literal["session_info_update"] = "session_info_update"
    title: str | None = None
    updated_at: str | None = None


class Cost(Wire):
    amount: float
    currency: str = "USD"


class UsageUpdate(Wire):
    session_update: Literal["usage_update"] = "usage_update"
    used: int
    size: int
    cost: Cost | None = None


class AvailableCommandInput(Wire):
    """What the command takes after its name: everything typed, described by `hint`."""

    hint: str


class AvailableCommand(Wire):
    name: str  # typed after a slash: `/name`
    description: str
    input: AvailableCommandInput | None = None


class AvailableCommandsUpdate(Wire):
    session_update: Literal["available_commands_update"] = "available_commands_update"
    available_commands: list[AvailableCommand]


CompactionStatus = Literal["in_progress", "completed", "failed", "cancelled"]


class CompactionUpdate(Wire):
    """UNSTABLE in v1 (`schema.unstable.json`): sent only to a client that advertised `session.compaction`."""

    session_update: Literal["compaction_update"] = "compaction_update"
    compaction_id: str
    status: CompactionStatus
    summary: list[ContentBlock] | None = None
    error: str | None = None


SessionUpdate = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCallStart
    | ToolCallProgress
    | PlanUpdate
    | CurrentModeUpdate
    | ConfigOptionUpdate
    | SessionInfoUpdate
    | UsageUpdate
    | AvailableCommandsUpdate
    | CompactionUpdate
)
