"""Verifying a trial, and applying a task's oracle solution: the same folders and variables for both.

The verifier command runs by `/bin/sh -c` in the workspace, with:

    EVAL_WORKSPACE            the trial's workspace (also the cwd)
    EVAL_TESTS_DIR            a fresh copy of the task's hidden tests/ (outside the workspace; removed after)
    EVAL_ORIGINAL_WORKSPACE   the task's untouched workspace/, to check what changed (or did not)
    EVAL_TRIAL_DIR            the trial folder
    EVAL_ANSWER_FILE          the agent's final message text (agent_answer.txt; may not exist)
    EVAL_PLAN_FILE            the agent's last plan, as JSON entries (agent_plan.json; may not exist)
    PATH                      this Python's folder first, so `python` is the harness's interpreter
    PYTHONDONTWRITEBYTECODE=1 so verifying leaves no __pycache__ in the workspace

Exit code 0 means resolved.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from .procs import ProcResult, run, tool_path
from .task import Task
from .workspace import apply_patch, copy_tree, remove_tree


@dataclass(frozen=True)
class TrialPaths:
    root: Path

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def answer(self) -> Path:
        return self.root / "agent_answer.txt"

    @property
    def plan(self) -> Path:
        return self.root / "agent_plan.json"

    @property
    def tests(self) -> Path:
        return self.root / "verify" / "tests"


def task_env(task: Task, paths: TrialPaths, base: Mapping[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    env.update(
        {
            "EVAL_WORKSPACE": str(paths.workspace),
            "EVAL_TESTS_DIR": str(paths.tests),
            "EVAL_ORIGINAL_WORKSPACE": str(task.workspace_dir.resolve()),
            "EVAL_TRIAL_DIR": str(paths.root),
            "EVAL_ANSWER_FILE": str(paths.answer),
            "EVAL_PLAN_FILE": str(paths.plan),
            "PATH": tool_path(env),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
    )
    return env


class CommandRunner(Protocol):
    async def __call__(
        self, command: str, *, cwd: Path, env: Mapping[str, str], timeout: float, log_path: Path | None = None
    ) -> ProcResult: ...


async def run_verifier(task: Task, paths: TrialPaths, log_path: Path, runner: CommandRunner = run) -> ProcResult:
    """Copy the hidden tests in, run the verifier (here, or where `runner` runs it), take the tests away again."""
    if task.tests_dir is not None:
        await copy_tree(task.tests_dir, paths.tests)
    else:
        paths.tests.mkdir(parents=True, exist_ok=True)
    try:
        return await runner(
            task.config.verifier.command,
            cwd=paths.workspace,
            env=task_env(task, paths),
            timeout=task.config.timeouts.verifier_seconds,
            log_path=log_path,
        )
    finally:
        await remove_tree(paths.tests.parent)


class SolutionError(RuntimeError):
    pass


async def apply_solution(task: Task, paths: TrialPaths) -> None:
    """Apply the oracle: `solution/solution.patch` with git apply, or run `solution/solve.sh` in the workspace."""
    folder = task.solution_dir
    if folder is not None and (folder / "solution.patch").is_file():
        await apply_patch(paths.workspace, folder / "solution.patch")
        return
    if folder is not None and (folder / "solve.sh").is_file():
        result = await run(
            ["/bin/sh", str((folder / "solve.sh").resolve())],
            cwd=paths.workspace,
            env=task_env(task, paths),
            timeout=task.config.timeouts.verifier_seconds,
        )
        if not result.ok:
            raise SolutionError(f"solve.sh failed (exit {result.exit_code}):\n{result.output[-2000:]}")
        return
    raise SolutionError(f"task {task.id} has no solution/solution.patch or solution/solve.sh")
