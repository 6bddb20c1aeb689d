"""The built-in commands. Adding one is a function and a line in `BUILTINS`."""

from __future__ import annotations

from typing import Any

from ...acp.schema import StopReason
from ...kit.commands import extra, init_text
from ...kit.prompts import render
from ...prestart.command_menu import BUILTIN_MENU
from ..sessions.session import Session
from ..workspace.file_notes import relative_to, undo_note
from ..workspace.git import git_answer, git_output
from ..workspace.undo import UndoReport
from .base import Command, CommandServices

MAX_DIFF_CHARS = 100_000  # of `/review`'s diff given to the model; the model can read the rest itself


async def compact(session: Session, focus: str, services: CommandServices) -> StopReason:
    return await services.compact(session, focus)


async def init_prompt(session: Session, arguments: str) -> str:
    return init_text(arguments)  # the early first call expands it the same way (`kit.commands`)


async def review_prompt(session: Session, arguments: str) -> str:
    return render("commands/review.md", changes=await uncommitted_changes(session.cwd), focus=extra(arguments))


def _undo_arguments(arguments: str, default: int) -> tuple[int, bool] | None:
    """`[N] [--force]` -> (N, force); None when they are not that."""
    words = arguments.split()
    force = "--force" in words
    rest = [word for word in words if word != "--force"]
    if len(rest) > 1 or (rest and not rest[0].isdigit()) or (rest and int(rest[0]) < 1):
        return None
    return (int(rest[0]) if rest else default), force


def _report(session: Session, report: UndoReport, what: str, command: str) -> str:
    return undo_note(report, what, relative_to(session.cwd), command)


async def undo(session: Session, arguments: str, services: CommandServices) -> StopReason:
    parsed = _undo_arguments(arguments, 1)
    if parsed is None:
        await services.say(session, "Usage: /undo [--force] (puts back the files the last turn changed)")
        return "end_turn"
    report = await services.undo(session, 1, parsed[1])
    done = _report(session, report, "Undid the last turn's file changes", "/undo")
    await services.say(session, done if not report.nothing else "No file changes to undo.")
    return "end_turn"


async def rewind(session: Session, arguments: str, services: CommandServices) -> StopReason:
    parsed = _undo_arguments(arguments, 1)
    if parsed is None:
        await services.say(session, "Usage: /rewind [N] [--force] (goes back N turns, files and conversation)")
        return "end_turn"
    turns, force = parsed
    report = await services.rewind(session, turns, force)
    went = f"Went back {turns} turn{'s' if turns != 1 else ''}; the model no longer sees them"
    done = _report(session, report, f"{went}. Files:", f"/rewind {turns}")
    await services.say(session, done if not report.nothing else f"{went}. No file changed.")
    return "end_turn"


async def uncommitted_changes(cwd: str) -> str:
    """`git status` and the diff of everything not committed (`git_calls` keeps diff drivers' programs off)."""
    answer = await git_answer(cwd, "status", "--short")
    status = answer.output
    if status is None:
        return f"(not a git repository, or git failed: there is no diff to show. git said: {answer.error})"
    options = ("--no-color",)
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


def _builtin(name: str, **behaviour: Any) -> Command:
    """A built-in command as the menu lists it (`prestart.command_menu`, which the early stage announces too)."""
    description, hint = next((d, h) for n, d, h in BUILTIN_MENU if n == name)
    return Command(name, description, hint, **behaviour)


BUILTINS: tuple[Command, ...] = (
    _builtin("compact", action=compact),
    _builtin("init", expand=init_prompt),
    _builtin("review", expand=review_prompt),
    _builtin("undo", action=undo),
    _builtin("rewind", action=rewind),
)
