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
from typing import NamedTuple

from ..kit.prompts import render
from ..kit.untrusted import Refused, read_capped
from .git_calls import GIT_TIMEOUT, GitAnswer, run_now


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
# Read no more than this: it holds the first MAX_INSTRUCTIONS_CHARS characters of any UTF-8 text (4 bytes at most
# each), so the cut is the same as when the whole file was read.
MAX_INSTRUCTIONS_BYTES = 4 * MAX_INSTRUCTIONS_CHARS
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


class Instructions(NamedTuple):
    """One instruction file: at most `MAX_INSTRUCTIONS_BYTES` of it, and its size; or why it was not read."""

    path: str
    data: bytes = b""
    size: int = 0
    refused: str = ""


def read_instructions(cwd: str, roots: Sequence[str]) -> list[Instructions]:
    """Each instruction file in `cwd` that is there (blocking). The project decides what these paths are: only a
    regular file inside `roots` (once every link is followed) is read, and only its first bytes."""
    files = []
    for path in instruction_paths(cwd):
        try:
            got = read_capped(path, MAX_INSTRUCTIONS_BYTES, roots)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except Refused as exc:
            files.append(_not_read(path, exc.reason))
            continue
        except OSError as exc:
            files.append(_not_read(path, f"it could not be read: {exc.strerror or exc}"))
            continue
        files.append(Instructions(path, got.data, got.size))
    return files


def _not_read(path: str, why: str) -> Instructions:
    import logging  # here: the early first call's path imports no logging unless a file is refused

    logging.getLogger(__name__).warning("the instruction file %s was not read: %s", path, why)
    return Instructions(path, refused=why)


def _text(data: bytes) -> str:
    """The bytes as `Path.read_text` gives them: undecodable bytes replaced, every line end made a newline."""
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")


def instructions_text(files: Sequence[Instructions]) -> str:
    """The prompt's instructions section from the files; one that was cut or not read says so."""
    sections = []
    for file in files:
        name = os.path.basename(file.path)
        if file.refused:
            text = f"[{name} was not read: {file.refused}]"
        else:
            text = _text(file.data)
            if len(text) > MAX_INSTRUCTIONS_CHARS or len(file.data) < file.size:
                text = (
                    f"{text[:MAX_INSTRUCTIONS_CHARS]}\n[{name} is cut here: only its first "
                    f"{min(len(text), MAX_INSTRUCTIONS_CHARS):,} characters of {file.size:,} bytes were read]"
                )
        sections.append(f'<project-instructions file="{file.path}">\n{text.strip()}\n</project-instructions>')
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
        instructions=instructions_text(read_instructions(cwd, [cwd, *additional_directories])),
        today=today,
    )
