"""Facts about the user's project for the system prompt: git state and the project's own instructions.

What the prompt says is made in `project_facts` (stdlib, and synchronous there as `system_prompt_now`, for the
early first model call); this gathers the facts on anyio.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence

import anyio

from ...prestart.project_facts import (
    BRANCH_QUERY,
    STATUS_QUERY,
    git_summary_text,
    instructions_text,
    read_instructions,
    render_system_prompt,
)
from .git import git_answer


async def git_summary(cwd: str) -> str:
    branch = await git_answer(cwd, *BRANCH_QUERY)
    status = None if branch.output is None else await git_answer(cwd, *STATUS_QUERY)
    return git_summary_text(branch, status)


async def project_instructions(cwd: str, roots: Sequence[str]) -> str:
    return instructions_text(await anyio.to_thread.run_sync(read_instructions, cwd, roots))


async def system_prompt(cwd: str, additional_directories: Sequence[str], today: datetime.date | None = None) -> str:
    return render_system_prompt(
        cwd,
        additional_directories,
        git=await git_summary(cwd),
        instructions=await project_instructions(cwd, [cwd, *additional_directories]),
        today=today,
    )
