"""Facts about the user's project for the system prompt: git state and the project's own instructions."""

from __future__ import annotations

import datetime
import logging
import platform
from collections.abc import Sequence

import anyio

from .git import git_output
from .prompts import render

log = logging.getLogger(__name__)

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")
MAX_INSTRUCTIONS_CHARS = 20_000
MAX_STATUS_LINES = 20


async def _git(cwd: str, *args: str) -> str | None:
    output = await git_output(cwd, *args)
    return None if output is None else output.decode(errors="replace")


async def git_summary(cwd: str) -> str:
    branch = await _git(cwd, "rev-parse", "--abbrev-ref", "HEAD")
    if branch is None:
        return "not a git repository"
    status = (await _git(cwd, "status", "--porcelain", "--ignore-submodules=all") or "").splitlines()
    summary = f"branch {branch.strip()}, " + (f"{len(status)} changed files" if status else "clean working tree")
    if status:
        shown = "\n".join(f"    {line}" for line in status[:MAX_STATUS_LINES])
        more = f"\n    ... and {len(status) - MAX_STATUS_LINES} more" if len(status) > MAX_STATUS_LINES else ""
        summary += f":\n{shown}{more}"
    return summary


async def project_instructions(cwd: str) -> str:
    sections = []
    for name in INSTRUCTION_FILES:
        path = anyio.Path(cwd) / name
        try:
            text = await path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if len(text) > MAX_INSTRUCTIONS_CHARS:
            text = text[:MAX_INSTRUCTIONS_CHARS] + "\n[... truncated]"
        sections.append(f'<project-instructions file="{path}">\n{text.strip()}\n</project-instructions>')
    return "\n\n".join(sections) or "(none)"


async def system_prompt(cwd: str, additional_directories: Sequence[str], today: datetime.date | None = None) -> str:
    return render(
        "system.md",
        cwd=cwd,
        additional_directories=", ".join(additional_directories) or "none",
        os=f"{platform.system()} {platform.release()}",
        date=(today or datetime.date.today()).isoformat(),
        git=await git_summary(cwd),
        instructions=await project_instructions(cwd),
    )
