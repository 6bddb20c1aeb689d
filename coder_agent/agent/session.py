"""A session: its roots, its conversation with the model, and the turn that may be running."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

import anyio

from ..llm.messages import ChatMessage, SystemMessage
from .prompts import system_prompt


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


@dataclass
class Session:
    id: str
    cwd: str
    additional_directories: list[str] = field(default_factory=list)
    history: list[ChatMessage] = field(default_factory=list)
    turn_scope: anyio.CancelScope | None = None

    @property
    def roots(self) -> list[str]:
        return [self.cwd, *self.additional_directories]

    def model_messages(self) -> list[ChatMessage]:
        """What the model sees: the system prompt (rendered fresh, so the date is today's), then the history."""
        return [SystemMessage(text=system_prompt(self.cwd, self.additional_directories)), *self.history]

    def cancel_turn(self) -> None:
        if self.turn_scope is not None:
            self.turn_scope.cancel()
