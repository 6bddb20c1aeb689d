"""What came of `ask_user`'s questions, as the model reads it and as the tool call shows it (and replays)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from .base import ToolResult, text_content

Result = Literal["accept", "decline", "cancel", "unasked"]

_GO_ON = "go on with what you know and say what you assumed, or end your turn and ask in your reply"


def _quoted(text: str) -> str:
    """In double quotes, escaped as JSON (a quote or a line break in the answer cannot pass for our own words)."""
    return json.dumps(text, ensure_ascii=False)


@dataclass(frozen=True)
class Reply:
    question: str
    choices: list[str]  # the labels the user picked
    note: str = ""  # what the user wrote
    own: bool = False  # the user picked "Other": the note is their answer
    asked: bool = True  # False: this question could not be put to the user

    def text(self) -> str:
        if not self.asked:
            return "not asked: the editor's prompts offer one choice, with no answer of one's own"
        parts = [_quoted(choice) for choice in self.choices]
        if self.own:
            parts.append(f"their own answer {_quoted(self.note)}" if self.note else '"Other", with nothing written')
        elif self.note:
            parts.append(f"with the note {_quoted(self.note)}")
        return ", ".join(parts) or "no choice"

    def raw(self) -> dict[str, Any]:
        raw: dict[str, Any] = {"question": self.question, "choices": self.choices}
        if self.note:
            raw["note" if not self.own else "answer"] = self.note
        if not self.asked:
            raw["asked"] = False
        return raw


@dataclass(frozen=True)
class Outcome:
    action: Result
    replies: list[Reply] = field(default_factory=list)
    problem: str | None = None  # why a decline was not the user's own (the answer did not fit, the client failed)
    reason: str | None = None  # why nobody was asked ("unasked")

    def for_model(self) -> str:
        """The answers (some may come before the user stopped answering), then what became of the rest."""
        answered = "\n".join(f"- {reply.question} → {reply.text()}" for reply in self.replies)
        if self.action == "accept":
            return f"The user answered:\n{answered}"
        if self.action == "unasked":
            rest = f"The user cannot be asked now: {self.reason}. Do not ask again in this turn; {_GO_ON}."
        elif self.action == "cancel":
            rest = f"The user dismissed the question without answering. Do not ask it again in this turn; {_GO_ON}."
        elif self.problem is not None:
            rest = (
                f"No usable answer: {self.problem}. Treat it as declined: do not ask the same again in this turn; "
                f"{_GO_ON}."
            )
        else:
            rest = f"The user declined to answer. Do not ask again in this turn; {_GO_ON}."
        return f"The user answered:\n{answered}\nThen, to the next question: {rest}" if self.replies else rest

    def shown(self) -> str:
        """Each question with its answer (Markdown), then what happened instead of the rest."""
        answered = "\n\n".join(f"**{reply.question}**\n{reply.text()}" for reply in self.replies)
        if self.action == "accept":
            return answered
        if self.action == "unasked":
            rest = f"Not asked: {self.reason}."
        elif self.action == "cancel":
            rest = "Dismissed without an answer."
        else:
            rest = f"Declined: {self.problem}." if self.problem else "Declined."
        return f"{answered}\n\n{rest}" if self.replies else rest

    def result(self) -> ToolResult:
        raw: dict[str, Any] = {"action": self.action, "answers": [reply.raw() for reply in self.replies]}
        if self.problem or self.reason:
            raw["problem"] = self.problem or self.reason
        return ToolResult(output=self.for_model(), content=[text_content(self.shown())], raw_output=raw)


def other_of(options: Any, other: str) -> Any:
    """The option whose label is `other` (any case), if the model offered one itself."""
    return next((option for option in options if option.label.strip().casefold() == other.casefold()), None)
