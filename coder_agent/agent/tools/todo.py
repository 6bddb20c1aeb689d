"""`todo_write`: the model's plan for the task, shown in the editor's plan view.

Each call carries the whole list; the editor is sent the whole list every time (ACP replaces its plan with
each `plan` update), so entries can be added, reworded, reordered or dropped freely.
"""

from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import Field

from ...acp.schema import PlanEntry, PlanUpdate
from .base import Intent, Tool, ToolArgs, ToolContext, ToolResult

Status = Literal["pending", "in_progress", "completed"]
Priority = Literal["high", "medium", "low"]


class TodoEntry(ToolArgs):
    content: str = Field(min_length=1, description="What to do, as a short imperative sentence")
    status: Status = Field(description="pending, in_progress (one at a time) or completed")
    priority: Priority = Field(default="medium", description="high, medium or low")


class TodoWriteArgs(ToolArgs):
    entries: list[TodoEntry] = Field(description="The complete plan, in order; it replaces the previous one")


def plan_summary(entries: list[TodoEntry]) -> str:
    if not entries:
        return "Plan cleared."
    counts: Counter[str] = Counter(entry.status for entry in entries)
    parts = [
        f"{counts[status]} {label}"
        for status, label in (("completed", "completed"), ("in_progress", "in progress"), ("pending", "pending"))
        if counts[status]
    ]
    summary = "Plan updated: " + ", ".join(parts) + "."
    if counts["in_progress"] > 1:
        summary += " Keep one entry in progress at a time."
    return summary


class TodoWrite(Tool[TodoWriteArgs]):
    name = "todo_write"
    title = "Update plan"
    kind = "think"
    args_model = TodoWriteArgs
    read_only = True

    async def prepare(self, args: TodoWriteArgs, ctx: ToolContext) -> Intent:
        return Intent(title="Update plan", kind="think", effect="none")

    async def run(self, args: TodoWriteArgs, intent: Intent, ctx: ToolContext) -> ToolResult:
        plan = [PlanEntry(content=e.content, status=e.status, priority=e.priority) for e in args.entries]
        await ctx.emit(PlanUpdate(entries=plan))
        return ToolResult(output=plan_summary(args.entries), raw_output={"entries": len(plan)})
