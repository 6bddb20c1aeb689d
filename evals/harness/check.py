"""`python -m evals check-tasks [--suite SUITE]`: every task is sound without any model.

For each task: its offline scripts parse as `Script`s whose tool calls fit the agent's tools (names and
arguments); the untouched workspace FAILS the verifier; the workspace with the oracle solution applied PASSES
it. Each check gets a fresh copy of the workspace.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from pydantic import ValidationError

from coder_agent.agent.tools import builtin_tools
from coder_agent.scripted.script import Script, ToolCallStep

from .suite import Suite
from .task import Task
from .verify import SolutionError, TrialPaths, apply_solution, run_verifier
from .workspace import WorkspaceError, prepare_workspace


@dataclass
class TaskCheck:
    task: str
    problems: list[str] = field(default_factory=list)
    untouched_exit: int | None = None
    oracle_exit: int | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


def _check_scripts(task: Task, check: TaskCheck) -> None:
    """Each script parses, and each tool call in it names a real tool with arguments that tool accepts."""
    tools = {tool.name: tool for tool in builtin_tools()}
    for kind, path in sorted(task.scripts.items()):
        try:
            script = Script.load(path)
        except (OSError, ValidationError) as exc:
            check.problems.append(f"{kind}.json is not a valid Script: {exc}")
            continue
        steps = [step for reply in script.replies for step in reply.steps if isinstance(step, ToolCallStep)]
        for step in steps:
            tool = tools.get(step.name)
            if tool is None:
                check.problems.append(f"{kind}.json calls {step.name!r}, which is not a tool")
                continue
            try:
                tool.parse(json.loads(step.arguments))
            except (ValueError, ValidationError) as exc:
                check.problems.append(f"{kind}.json: bad arguments for {step.name}: {exc}")


async def check_task(task: Task, scratch: Path) -> TaskCheck:
    check = TaskCheck(task.id)
    _check_scripts(task, check)
    untouched = TrialPaths(scratch / "untouched")
    oracle = TrialPaths(scratch / "oracle")
    try:
        for paths in (untouched, oracle):
            paths.root.mkdir(parents=True)
            await prepare_workspace(task.workspace_dir, paths.workspace)
        before = await run_verifier(task, untouched, untouched.root / "verifier.log")
        check.untouched_exit = before.exit_code
        if before.ok:
            check.problems.append("the untouched workspace passes the verifier")
        await apply_solution(task, oracle)
        after = await run_verifier(task, oracle, oracle.root / "verifier.log")
        check.oracle_exit = after.exit_code
        if not after.ok:
            tail = after.output.strip()[-1500:]
            check.problems.append(f"the oracle solution fails the verifier (exit {after.exit_code}):\n{tail}")
    except (SolutionError, WorkspaceError, OSError) as exc:
        check.problems.append(f"{type(exc).__name__}: {exc}")
    return check


async def check_tasks(suite: Suite, tasks: list[Task], workers: int = 2) -> list[TaskCheck]:
    limiter = anyio.CapacityLimiter(workers)
    checks: dict[str, TaskCheck] = {}
    with tempfile.TemporaryDirectory(prefix=f"evals-check-{suite.name}-") as tmp:

        async def one(task: Task) -> None:
            async with limiter:
                checks[task.id] = await check_task(task, Path(tmp) / task.id)

        async with anyio.create_task_group() as tg:
            for task in tasks:
                tg.start_soon(one, task)
    return [checks[task.id] for task in tasks]


def render_checks(checks: list[TaskCheck]) -> str:
    lines = []
    for check in checks:
        status = "ok  " if check.ok else "FAIL"
        lines.append(f"{status} {check.task} (untouched exit {check.untouched_exit}, oracle exit {check.oracle_exit})")
        lines += [f"     - {problem}" for problem in check.problems]
    failed = sum(not check.ok for check in checks)
    lines.append(f"{len(checks) - failed}/{len(checks)} tasks sound")
    return "\n".join(lines)
