"""A trial's workspace: a fresh copy of the task's starting files, committed to git so the change is a diff.

The copy and git run in a worker thread (they are quick, but must not stall the event loop that streams the
other trials' wire traffic).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import anyio

GIT = ["git", "-c", "user.name=evals", "-c", "user.email=evals@localhost", "-c", "core.autocrlf=false"]
GIT_TIMEOUT = 60.0
# Build litter that is nobody's change: not copied from a task, and kept out of the diff.
LITTER = ("__pycache__", "*.pyc", ".pytest_cache")
EXCLUDES = "__pycache__/\n*.pyc\n.pytest_cache/\n"


class WorkspaceError(RuntimeError):
    pass


def _git(workspace: Path, *args: str) -> str:
    done = subprocess.run(
        [*GIT, *args], cwd=workspace, capture_output=True, timeout=GIT_TIMEOUT, check=False, stdin=subprocess.DEVNULL
    )
    if done.returncode != 0:
        raise WorkspaceError(f"git {' '.join(args)} failed: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout.decode("utf-8", errors="replace")


def _prepare(source: Path, target: Path) -> Path:
    target = target.resolve()
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target, symlinks=True, ignore=shutil.ignore_patterns(*LITTER))
    _git(target, "init", "-q", "-b", "main")
    (target / ".git" / "info").mkdir(exist_ok=True)
    (target / ".git" / "info" / "exclude").write_text(EXCLUDES, encoding="utf-8")
    _git(target, "add", "-A")
    _git(target, "commit", "-q", "--allow-empty", "--no-gpg-sign", "-m", "start")
    return target


def _diff(workspace: Path) -> str:
    _git(workspace, "add", "-A")
    return _git(workspace, "diff", "--cached", "--binary", "HEAD")


async def prepare_workspace(source: Path, target: Path) -> Path:
    """Copy `source` to `target` (replacing it) and commit it as the start; returns the absolute path."""
    return await anyio.to_thread.run_sync(_prepare, source, target)


async def workspace_diff(workspace: Path) -> str:
    """Everything changed since the start (new, deleted and binary files included), as `git diff` shows it."""
    return await anyio.to_thread.run_sync(_diff, workspace)


async def apply_patch(workspace: Path, patch: Path) -> None:
    await anyio.to_thread.run_sync(lambda: _git(workspace, "apply", "--whitespace=nowarn", str(patch.resolve())))


async def copy_tree(source: Path, target: Path) -> None:
    def copy() -> None:
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(source, target, symlinks=True)

    await anyio.to_thread.run_sync(copy)


async def remove_tree(target: Path) -> None:
    await anyio.to_thread.run_sync(lambda: shutil.rmtree(target, ignore_errors=True))
