"""The system prompt's facts about the user's project, the parts that need no async runtime.

The git command lines (with the project's commands switched off, see `git.py`), what they print turned into
the prompt's text, the project's instruction files, and the prompt's final render. `environment.py` and
`git.py` build on these; `system_prompt_now` is the same prompt made synchronously, for the early first model
call that is sent before the runtime is imported: it must come out byte for byte the same.
Standard library only.
"""

from __future__ import annotations

import datetime
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..credentials import child_environment
from ..untrusted import Refused, read_capped
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
# Read no more than this: it holds the first MAX_INSTRUCTIONS_CHARS characters of any UTF-8 text (4 bytes at most
# each), so the cut is the same as when the whole file was read.
MAX_INSTRUCTIONS_BYTES = 4 * MAX_INSTRUCTIONS_CHARS
MAX_STATUS_LINES = 20
GIT_TIMEOUT = 3.0

NEUTRAL = ("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "core.untrackedCache=false")
DRIVERS_QUERY = ("config", "--get-regexp", r"^filter\..*\.(clean|smudge|process)$")
BRANCH_QUERY = ("rev-parse", "--abbrev-ref", "HEAD")
STATUS_QUERY = ("status", "--porcelain", "--ignore-submodules=all")


# --- git: command lines and what they print


def git_environment() -> dict[str, str]:
    """The environment of the agent's own git calls: none of its credentials, no optional locks, no prompts."""
    return {**child_environment(), "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"}


def git_command(args: Sequence[str], drivers: Sequence[str] = ()) -> list[str]:
    """`git ARGS` with the project's commands switched off (each of `drivers`' filter commands emptied)."""
    options = list(NEUTRAL)
    for driver in drivers:
        for command in ("clean", "smudge", "process"):
            options += ["-c", f"filter.{driver}.{command}="]
    return ["git", *options, *args]


def drivers_command() -> list[str]:
    """The query for the filter drivers the project's config defines (reading config runs nothing)."""
    return git_command(DRIVERS_QUERY)


def parse_drivers(output: bytes | None) -> list[str]:
    """The drivers' names from `drivers_command()`'s output (None: it failed, or found none)."""
    if output is None:
        return []
    drivers = set()
    for line in output.decode(errors="replace").splitlines():
        key = line.split(" ", 1)[0]  # filter.<driver>.<command>; the driver's name may hold dots
        drivers.add(key[len("filter.") : key.rfind(".")])
    return sorted(drivers)


def config_state(cwd: str) -> tuple[str, ...]:
    """Where the config files that could define drivers are, with their sizes and times: a change shows here."""
    state = []
    for folder in (cwd, *_parents(cwd)):
        dot_git = os.path.join(folder, ".git")
        if os.path.exists(dot_git):
            for name in (os.path.join(dot_git, "config"), dot_git):
                try:
                    info = os.stat(name)
                except OSError:
                    continue
                state.append(f"{name}:{info.st_size}:{info.st_mtime_ns}")
            break
    for name in (os.path.expanduser("~/.gitconfig"), os.environ.get("GIT_CONFIG_GLOBAL", "")):
        if name:
            try:
                info = os.stat(name)
                state.append(f"{name}:{info.st_size}:{info.st_mtime_ns}")
            except OSError:
                pass
    return tuple(state)


def _parents(path: str) -> list[str]:
    parents = []
    while (parent := os.path.dirname(path)) != path:
        parents.append(parent)
        path = parent
    return parents


_drivers: dict[str, tuple[tuple[str, ...], list[str]]] = {}  # cwd -> (what the config files were, drivers)


def known_drivers(cwd: str, state: tuple[str, ...]) -> list[str] | None:
    """The drivers last found in `cwd`, if its config files are still as they were (`config_state`)."""
    known = _drivers.get(cwd)
    if known is not None and known[0] == state and state:
        return known[1]
    return None


def remember_drivers(cwd: str, state: tuple[str, ...], drivers: list[str]) -> None:
    _drivers[cwd] = (state, drivers)


def git_summary_text(branch: bytes | None, status: bytes | None) -> str:
    """The prompt's git line from `BRANCH_QUERY`'s and `STATUS_QUERY`'s outputs (None: the command failed)."""
    if branch is None:
        return "not a git repository"
    lines = (status or b"").decode(errors="replace").splitlines()
    summary = f"branch {branch.decode(errors='replace').strip()}, " + (
        f"{len(lines)} changed files" if lines else "clean working tree"
    )
    if lines:
        shown = "\n".join(f"    {line}" for line in lines[:MAX_STATUS_LINES])
        more = f"\n    ... and {len(lines) - MAX_STATUS_LINES} more" if len(lines) > MAX_STATUS_LINES else ""
        summary += f":\n{shown}{more}"
    return summary


# --- the project's instructions


def instruction_paths(cwd: str) -> list[str]:
    return [str(Path(cwd) / name) for name in INSTRUCTION_FILES]


@dataclass(frozen=True)
class Instructions:
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


# --- synchronously: the same commands and files, with subprocess


def run_git_now(cwd: str, command: list[str], timeout: float) -> bytes | None:
    """`command`'s stdout, or None if it failed or took longer than `timeout` seconds (it is killed then)."""
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=git_environment(),
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def drivers_now(cwd: str, timeout: float) -> list[str]:
    state = config_state(cwd)
    drivers = known_drivers(cwd, state)
    if drivers is None:
        drivers = parse_drivers(run_git_now(cwd, drivers_command(), timeout))
        remember_drivers(cwd, state, drivers)
    return drivers


def git_output_now(cwd: str, *args: str, timeout: float = GIT_TIMEOUT) -> bytes | None:
    """`git.git_output`, blocking."""
    return run_git_now(cwd, git_command(args, drivers_now(cwd, timeout)), timeout)


def git_summary_now(cwd: str) -> str:
    branch = git_output_now(cwd, *BRANCH_QUERY)
    status = None if branch is None else git_output_now(cwd, *STATUS_QUERY)
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
