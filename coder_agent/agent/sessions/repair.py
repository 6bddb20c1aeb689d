"""Making a stored conversation whole again after the agent died in the middle of a turn.

Two things a crash can leave behind: text the user was shown that never reached the model's history (the
reply was still streaming), and tool calls without results (which providers reject). The update log says
what the user saw, so the history is completed from it, and the log gets a final state for each
interrupted tool call so its replay does not stay "pending" forever.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from ...acp.schema import ContentToolCallContent, TextContent, ToolCallProgress
from ...llm.messages import AssistantMessage, ChatMessage, ToolMessage, UserMessage
from .history import missing_answers

COMPACTION_PREFIX = "compact_"  # the id of a compaction's tool call (`compactor.py`)
INTERRUPTED = "Interrupted: the agent stopped before this call finished; it may or may not have taken effect."


@dataclass
class Repair:
    history: list[ChatMessage]
    added: list[ChatMessage] = field(default_factory=list)  # to append to the stored history
    updates: list[ToolCallProgress] = field(default_factory=list)  # to append to the update log


def _last_turn(log: Iterable[bytes]) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Since the last user prompt: agent text by messageId, and the last status of each tool call."""
    texts: dict[str, list[str]] = {}
    statuses: dict[str, str] = {}
    for body in log:
        try:
            update = json.loads(body)
        except ValueError:
            continue
        kind = update.get("sessionUpdate")
        if kind == "user_message_chunk":
            texts.clear()
            statuses.clear()
        elif kind == "agent_message_chunk" and update.get("content", {}).get("type") == "text":
            texts.setdefault(update.get("messageId") or "", []).append(update["content"]["text"])
        elif kind in ("tool_call", "tool_call_update") and "status" in update:
            statuses[update["toolCallId"]] = update["status"]
            if update["status"] == "completed" and str(update["toolCallId"]).startswith(COMPACTION_PREFIX):
                texts.clear()  # a compaction took what was said before it into its summary
    return texts, statuses


def _interrupted() -> ContentToolCallContent:
    return ContentToolCallContent(content=TextContent(text=INTERRUPTED))


def looks_interrupted(history: list[ChatMessage]) -> bool:
    """Whether the conversation stops where only a crash would stop it."""
    if history and isinstance(history[-1], UserMessage | ToolMessage):
        return True
    return bool(missing_answers(history, INTERRUPTED))


def repair(history: list[ChatMessage], log: Iterable[bytes]) -> Repair:
    result = Repair(list(history))
    texts, statuses = _last_turn(log)
    known = {m.message_id for m in history if isinstance(m, AssistantMessage) and m.message_id}
    awaiting_reply = bool(history) and isinstance(history[-1], UserMessage | ToolMessage)
    for message_id, pieces in texts.items():
        if awaiting_reply and message_id not in known:
            partial = AssistantMessage(text="".join(pieces), message_id=message_id or None)
            result.history.append(partial)
            result.added.append(partial)
    answers = missing_answers(result.history, INTERRUPTED)
    result.history.extend(answers)
    result.added.extend(answers)
    for tool_call_id, status in statuses.items():
        if status in ("pending", "in_progress"):
            result.updates.append(
                ToolCallProgress(
                    tool_call_id=tool_call_id,
                    status="failed",
                    content=[_interrupted()],
                )
            )
    return result
