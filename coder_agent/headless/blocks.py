"""Rich renderables for the pieces of a run: diffs, command output, the plan, the closing summary line."""

from __future__ import annotations

import difflib
import os
import re

from rich.text import Text

from ..acp.schema import DiffContent, PlanEntry
from ..agent.workspace.line_counts import difflib_bounded
from .output import RunResult

MAX_DIFF_LINES = 200
MAX_OUTPUT_LINES = 30

_FENCE = re.compile(r"\A(`{3,})[^\n]*\n(.*?)\n?\1\s*\Z", re.DOTALL)

_DIFF_STYLES = (("+++", "bold"), ("---", "bold"), ("@@", "cyan"), ("+", "green"), ("-", "red"))

_PLAN_MARKS = {"completed": ("✔", "dim"), "in_progress": ("▶", "bold"), "pending": ("☐", "")}

_STOP_STYLES = {"end_turn": "green", "cancelled": "red"}


def shown_path(path: str, cwd: str) -> str:
    """`path` relative to `cwd` when it is inside it."""
    try:
        relative = os.path.relpath(path, cwd)
    except ValueError:
        return path
    return path if relative.startswith("..") else relative


def unfenced(text: str) -> str:
    """The inside of a Markdown code block (how tools wrap command output), else the text itself."""
    match = _FENCE.match(text.strip("\n"))
    return match.group(2) if match else text


def _capped(lines: list[str], limit: int, keep_end: bool) -> tuple[list[str], int]:
    if len(lines) <= limit:
        return lines, 0
    return (lines[-limit:] if keep_end else lines[:limit]), len(lines) - limit


def diff_text(diff: DiffContent, cwd: str, limit: int = MAX_DIFF_LINES) -> Text:
    """A coloured unified diff of one file change (a new file is all additions)."""
    name = shown_path(diff.path, cwd)
    old = (diff.old_text or "").splitlines()
    new = diff.new_text.splitlines()
    if not difflib_bounded(old, new):  # quadratic on this (a shuffled file): the run would stand still for it
        return Text(f"  ({name}: {len(old):,} lines -> {len(new):,}, a change too large to show here)\n", style="dim")
    source = "/dev/null" if diff.old_text is None else f"a/{name}"
    lines = list(difflib.unified_diff(old, new, source, f"b/{name}", lineterm=""))
    if not lines:
        return Text(f"  (no changes to {name})", style="dim")
    lines, hidden = _capped(lines, limit, keep_end=False)
    text = Text()
    for line in lines:
        style = next((style for prefix, style in _DIFF_STYLES if line.startswith(prefix)), "")
        text.append(f"  {line}\n", style=style)
    if hidden:
        text.append(f"  … {hidden} more diff lines\n", style="dim")
    return text


def output_tail(text: str, limit: int = MAX_OUTPUT_LINES, style: str = "dim") -> Text:
    """The end of a command's output, indented, with a note of how many lines came before it."""
    lines, hidden = _capped(unfenced(text).rstrip("\n").split("\n"), limit, keep_end=True)
    result = Text()
    if hidden:
        result.append(f"  … {hidden} earlier lines\n", style="dim")
    for line in lines:
        result.append(f"  {line}\n", style=style)
    return result


def plan_checklist(entries: list[PlanEntry]) -> Text:
    text = Text("Plan\n", style="bold")
    if not entries:
        text.append("  (cleared)\n", style="dim")
    for entry in entries:
        mark, style = _PLAN_MARKS.get(entry.status, ("☐", ""))
        text.append(f"  {mark} {entry.content}\n", style=style)
    return text


def summary_line(result: RunResult) -> Text:
    usage = result.usage
    text = Text("── ", style="dim")
    text.append(result.stop_reason, style=_STOP_STYLES.get(result.stop_reason, "yellow"))
    parts = [f"{usage.total_tokens:,} tokens"]
    if usage.model_calls:
        parts.append(f"{usage.model_calls} model call{'s' if usage.model_calls != 1 else ''}")
        if usage.context_window:
            parts.append(f"context {usage.context_tokens:,}/{usage.context_window:,}")
    if usage.cost_usd is not None:
        parts.append(f"${usage.cost_usd:.4f}")
    parts.append(f"{result.duration:.1f} s")
    text.append(" · " + " · ".join(parts), style="dim")
    if result.session_id is not None:
        text.append(f"\n   session {result.session_id}", style="dim")
    return text
