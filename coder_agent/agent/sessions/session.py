"""A session: its roots, mode and choices, its conversation with the model, and the turn that may be running."""

from __future__ import annotations

from dataclasses import dataclass, field

import anyio

from ...acp.schema import SessionUpdate
from ...kit.ids import new_id as new_id  # the ids of everything a session makes
from ...kit.prompts import system_text
from ...llm.messages import ChatMessage, SystemMessage
from ..diagnostics import Diagnostics
from ..permissions.gate import DEFAULT_MODE, PermissionRules
from ..permissions.lasting_rules import RuleBook
from ..tool_source import ToolSource
from ..workspace.checkpoints import Checkpoints
from .notes import Note
from .transcript import Transcript

TURN_STOP_TIMEOUT = 10.0  # how long closing a session waits for its cancelled turn to clean up


@dataclass(frozen=True)
class LastTurn:
    """How the session's last prompt turn ended: its stop reason, or `error` (and the message), and when."""

    stop_reason: str  # an ACP stop reason, or "error"
    error: str | None = None
    at: str = ""

    def state(self) -> dict[str, str]:
        return {"stop_reason": self.stop_reason, "at": self.at, **({"error": self.error} if self.error else {})}


@dataclass
class CompactionStats:
    """How often the session was compacted, and what the summaries cost in model tokens."""

    count: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def state(self) -> dict[str, int]:
        return {"count": self.count, "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens}

    @classmethod
    def from_state(cls, state: object) -> CompactionStats:
        if not isinstance(state, dict):
            return cls()
        values = {key: state.get(key) for key in ("count", "prompt_tokens", "completion_tokens")}
        return cls(**{key: value for key, value in values.items() if isinstance(value, int)})


@dataclass
class Session:
    id: str
    cwd: str
    additional_directories: list[str] = field(default_factory=list)
    mode: str = DEFAULT_MODE
    model: str | None = None  # litellm model string; None: no model configured
    thought_level: str | None = None  # reasoning effort, where the model supports it
    system_prompt: str = ""
    # The mode the system prompt was written with, and the one the model was last told: a new mode is told in the
    # next prompt, never by rewriting the system prompt (the provider's prompt cache holds the conversation's start).
    system_mode: str | None = None
    told_mode: str | None = None
    history: list[ChatMessage] = field(default_factory=list)
    rules: PermissionRules = field(default_factory=PermissionRules)
    rule_book: RuleBook | None = None  # the user's lasting rules (None: none are kept)
    turn_scope: anyio.CancelScope | None = None
    turn_done: anyio.Event = field(default_factory=anyio.Event)
    transcript: Transcript | None = None
    title: str | None = None
    created_at: str = ""
    cost_usd: float = 0.0
    tool_source: ToolSource | None = None  # the session's MCP servers, say
    diagnostics: Diagnostics | None = None  # its language servers (started when first needed)
    last_turn: LastTurn | None = None
    checkpoints: Checkpoints | None = None  # its turns' files, kept for undo
    notes: list[Note] = field(default_factory=list)  # for the model, with the next prompt sent it (`notes.py`)
    deleted: bool = False
    # Tokens in context at the last model call (its usage), which saw `history[:context_mark]`; None: not measured
    context_tokens: int = 0
    context_mark: int | None = None
    compactions: CompactionStats = field(default_factory=lambda: CompactionStats())

    def add(self, message: ChatMessage) -> None:
        """Append to the conversation, and keep it."""
        self.history.append(message)
        if self.transcript is not None:
            self.transcript.keep_messages([message])

    def replace_history(self, history: list[ChatMessage]) -> None:
        """Put `history` in place of the conversation, kept at once (raises `StoreError`; then nothing changed)."""
        if self.transcript is not None:
            self.transcript.replace_messages(history)
        self.history = history

    def forget_from(self, index: int) -> None:
        """Drop the conversation from `index` on (the model never sees it again)."""
        del self.history[index:]
        if self.transcript is not None:
            self.transcript.truncate_messages(index)

    def transcript_keep(self, update: SessionUpdate) -> None:
        if self.transcript is not None:
            self.transcript.keep(update)

    async def publish(
        self, update: SessionUpdate, *, replay_as: SessionUpdate | None = None, keep: bool = True
    ) -> None:
        if self.transcript is None:
            raise RuntimeError(f"session {self.id} has no transcript")
        await self.transcript.send(update, replay_as=replay_as, keep=keep)

    @property
    def roots(self) -> list[str]:
        return [self.cwd, *self.additional_directories]

    def model_messages(self) -> list[ChatMessage]:
        """What the model sees: the system prompt (with the mode it was written in), then the history."""
        return [SystemMessage(text=system_text(self.system_prompt, self.system_mode or self.mode)), *self.history]

    def mode_changed(self) -> bool:
        """Whether the mode changed since the model was last told it; from now on, the model knows it."""
        if self.system_mode is None:  # the system prompt is written with this mode
            self.system_mode = self.told_mode = self.mode
            return False
        changed, self.told_mode = self.told_mode != self.mode, self.mode
        return changed

    def cancel_turn(self) -> None:
        if self.turn_scope is not None:
            self.turn_scope.cancel()

    async def shut_down(self) -> None:
        """Cancel the turn, wait (bounded) until it has cleaned up, and free what the session holds."""
        if self.turn_scope is not None:
            self.cancel_turn()
            with anyio.move_on_after(TURN_STOP_TIMEOUT):
                await self.turn_done.wait()
        await self.replace_tool_source(None)
        if self.diagnostics is not None:
            await self.diagnostics.close()

    async def replace_tool_source(self, source: ToolSource | None) -> None:
        """Close the session's tool source, if it has one, and take `source` instead."""
        old, self.tool_source = self.tool_source, source
        if old is not None:
            await old.close()
