"""The built-in commands. Adding one is a function and a line in `BUILTINS`."""

from __future__ import annotations

from ...acp.schema import StopReason
from ..git import git_output
from ..prompts import render
from ..session import Session
from .base import Command, CommandServices

MAX_DIFF_CHARS = 100_000  # of `/review`'s diff given to the model; the model can read the rest itself


async def compact(session: Session, focus: str, services: CommandServices) -> StopReason:
    return await services.compact(session, focus)


async def init_prompt(session: Session, arguments: str) -> str:
    return render("commands/init.md", instructions=_extra(arguments))


async def review_prompt(session: Session, arguments: str) -> str:
    return render("commands/review.md", changes=await uncommitted_changes(session.cwd), focus=_extra(arguments))


def _extra(arguments: str) -> str:
    return f"\nThe user adds: {arguments}" if arguments else ""


async def uncommitted_changes(cwd: str) -> str:
    """`git status` and the diff of everything not committed, external diff and textconv drivers off."""
    status = await git_output(cwd, "status", "--short", "--ignore-submodules=all")
    if status is None:
        return "(not a git repository, or git failed: there is no diff to show)"
    options = ("--no-color", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all")
    diff = await git_output(cwd, "diff", *options, "HEAD")
    if diff is None:  # no commit yet: what is staged, and what is not
        diff = (await git_output(cwd, "diff", *options, "--cached") or b"") + (
            await git_output(cwd, "diff", *options) or b""
        )
    text = diff.decode(errors="replace")
    if len(text) > MAX_DIFF_CHARS:
        text = text[:MAX_DIFF_CHARS] + f"\n[... {len(text) - MAX_DIFF_CHARS} more characters of diff: read the files]"
    shown_status = status.decode(errors="replace").strip() or "(clean: nothing uncommitted)"
    return f"git status --short:\n{shown_status}\n\ngit diff HEAD:\n{text.strip() or '(empty)'}"


BUILTINS: tuple[Command, ...] = (
    Command(
        "compact",
        "Summarise the conversation so far, to free the model's context window",
        hint="what to keep in focus (optional)",
        action=compact,
    ),
    Command("init", "Write or update the project's AGENTS.md from what the agent learns of it", expand=init_prompt),
    Command("review", "Review the uncommitted changes", hint="what to look at (optional)", expand=review_prompt),
)
