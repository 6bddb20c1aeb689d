"""The system prompt's facts about the user's project, the parts that need no async runtime.

What the agent's git calls (`git_calls`: the project's commands switched off) print, turned into the prompt's
text, the project's instruction files, and the prompt's final render. `environment.py` and
`git.py` build on these; `system_prompt_now` is the same prompt made synchronously, for the early first model
call that is sent before the runtime is imported: it must come out byte for byte the same.
Standard library only.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Sequence
from pathlib import Path

from .git_calls import GIT_TIMEOUT, GitAnswer, run_now
from .prompts import render


def os_name() -> str:
    """`platform.system()` and `platform.release()`, as they are on POSIX (`os.uname()`), without importing `platform`
    (~10 ms, on the early first call's path) where `os.uname` exists."""
    if hasattr(os, "uname"):
        uname = os.uname()
        return f"{uname.sysname} {uname.release}"
    import platform

    return f"{platform.system()} {platform.release()}"


INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")
MAX_INSTRUCTIONS_CHARS = 20_000
MAX_STATUS_LINES = 20
BRANCH_QUERY = ("rev-parse", "--abbrev-ref", "HEAD")
STATUS_QUERY = ("status", "--porcelain")


# --- git: what it prints, as the prompt says it


def git_summary_text(branch: GitAnswer, status: GitAnswer | None) -> str:
    """The prompt's git line from `BRANCH_QUERY`'s and `STATUS_QUERY`'s answers (status None: not asked, as
    the first found no repository)."""
    if branch.output is None or status is None:
        return "not a git repository"
    summary = f"branch {branch.output.decode(errors='replace').strip()}, "
    if status.output is None:  # a `required` filter, say: not "clean", which it may not be
        return summary + f"the working tree could not be looked at (git status failed: {status.error})"
    lines = status.output.decode(errors="replace").splitlines()
    summary += f"{len(lines)} changed files" if lines else "clean working tree"
    if lines:
        shown = "\n".join(f"    {line}" for line in lines[:MAX_STATUS_LINES])
        more = f"\n    ... and {len(lines) - MAX_STATUS_LINES} more" if len(lines) > MAX_STATUS_LINES else ""
        summary += f":\n{shown}{more}"
    return summary


# --- the project's instructions


def instruction_paths(cwd: str) -> list[str]:
    return [str(Path(cwd) / name) for name in INSTRUCTION_FILES]


def read_instructions(cwd: str) -> list[tuple[str, str]]:
    """(path, text) of each instruction file in `cwd` that can be read (blocking)."""
    files = []
    for path in instruction_paths(cwd):
        try:
            text = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        files.append((path, text))
    return files


def instructions_text(files: Sequence[tuple[str, str]]) -> str:
    """The prompt's instructions section from the files' (path, text)."""
    sections = []
    for path, text in files:
        if len(text) > MAX_INSTRUCTIONS_CHARS:
            text = text[:MAX_INSTRUCTIONS_CHARS] + "\n[... truncated]"
        sections.append(f'<project-instructions file="{path}">\n{text.strip()}\n</project-instructions>')
    return "\n\n".join(sections) or "(none)"


# --- the prompt


def render_system_prompt(
    cwd: str, additional_directories: Sequence[str], git: str, instructions: str, today: datetime.date | None = None
) -> str:
    return render(
        "system.md",
        cwd=cwd,
        additional_directories=", ".join(additional_directories) or "none",
        os=os_name(),
        date=(today or datetime.date.today()).isoformat(),
        git=git,
        instructions=instructions,
    )


# --- synchronously: the same git calls (`git_calls.run_now`) and files


def git_answer_now(cwd: str, *args: str, timeout: float = GIT_TIMEOUT) -> GitAnswer:
    """`git.git_answer`, blocking."""
    return run_now(cwd, args, timeout)


def git_summary_now(cwd: str) -> str:
    branch = git_answer_now(cwd, *BRANCH_QUERY)
    status = None if branch.output is None else git_answer_now(cwd, *STATUS_QUERY)
    return git_summary_text(branch, status)


def system_prompt_now(cwd: str, additional_directories: Sequence[str], today: datetime.date | None = None) -> str:
    """`environment.system_prompt`, synchronously and with the standard library alone."""
    return render_system_prompt(
        cwd,
        additional_directories,
        git=git_summary_now(cwd),
        instructions=instructions_text(read_instructions(cwd)),
        today=today,
    )
