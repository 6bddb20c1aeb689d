"""A run: every (task, trial) of a suite on W workers, with a progress display, resumable.

`--resume RUN_DIR` reads the run's `run.json` and skips the trials whose `result.json` exists; a trial that
was cut off half-way is run again from scratch.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

import anyio
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from . import provenance
from .config import RunConfig
from .docker import unavailable_reason
from .needs import require, require_in_images
from .results import TrialResult, load_results, trial_dir
from .sandbox import SandboxPlan, plan_docker
from .suite import load_suite, select_tasks
from .summary import write_summary
from .task import Task
from .trial import run_trial

RUNS_DIR = Path(__file__).resolve().parents[1] / "runs"

OnResult = Callable[[TrialResult], None]


def new_run_dir(config: RunConfig, parent: Path = RUNS_DIR) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{stamp}-{Path(config.suite).name}-{config.model_name}-{config.profile}")
    return parent / name


def pending_trials(config: RunConfig, tasks: list[Task], run_dir: Path) -> list[tuple[Task, int]]:
    return [
        (task, n)
        for task in tasks
        for n in range(1, config.trials + 1)
        if not (trial_dir(run_dir, task.id, n) / "result.json").is_file()
    ]


def prepare_run(config: RunConfig, run_dir: Path) -> list[Task]:
    """The run's tasks, once everything it needs is known to be there (see needs.py); raises (TaskError,
    ValueError) and creates nothing otherwise, so a run that cannot start leaves no folder behind."""
    tasks = select_tasks(load_suite(config.suite), config.tasks)
    if (run_dir / "run.json").is_file() and RunConfig.load(run_dir) != config:
        raise ValueError(f"{run_dir} holds a run with other settings; resume it with --resume alone")
    if config.sandbox == "docker":
        if (reason := unavailable_reason()) is not None:
            raise ValueError(f"--sandbox docker: {reason}")
        require(tasks, schema=True, verifiers=False)  # they run in the task's image: checked once it is built
    else:
        require(tasks, schema=True)
    return tasks


async def run_eval(
    config: RunConfig,
    run_dir: Path,
    *,
    console: Console | None = None,
    on_result: OnResult | None = None,
    limiter: anyio.CapacityLimiter | None = None,
) -> list[TrialResult]:
    """Run (or finish) the run in `run_dir`; writes summary.json and summary.md; returns every trial's result.

    `limiter` (default: `config.workers` slots) may be shared by runs going on at once, to bound them together.
    """
    tasks = await anyio.to_thread.run_sync(prepare_run, config, run_dir)
    await anyio.Path(run_dir).mkdir(parents=True, exist_ok=True)
    if not await anyio.Path(run_dir / "run.json").is_file():
        config.save(run_dir)
    todo = pending_trials(config, tasks, run_dir)
    console = console or Console(stderr=True)
    plan = SandboxPlan()
    if config.sandbox == "docker" and todo:
        console.print("docker: the trials' images (built once, then reused)...")
        plan = await anyio.to_thread.run_sync(plan_docker, [task for task, _ in todo], config.image, run_dir)
        await anyio.to_thread.run_sync(require_in_images, [task for task, _ in todo], plan)
    await anyio.to_thread.run_sync(provenance.record, run_dir, config, tasks, plan)
    limiter = limiter or anyio.CapacityLimiter(config.workers)
    total = len(tasks) * config.trials
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("resolved {task.fields[resolved]}"),
        TimeElapsedColumn(),
        console=console,
        disable=not console.is_terminal,
    )
    done_before = total - len(todo)
    resolved = sum(result.resolved for result in load_results(run_dir)) if done_before else 0
    with progress:
        bar = progress.add_task(config.suite, total=total, completed=done_before, resolved=resolved)

        async def one(task: Task, n: int) -> None:
            nonlocal resolved
            async with limiter:
                result = await run_trial(config, task, n, run_dir, plan)
            resolved += result.resolved
            progress.update(bar, advance=1, resolved=resolved)
            mark = "[green]resolved" if result.resolved else f"[red]{result.failure_mode}"
            console.print(f"{task.id} #{n}: {mark}[/] ({result.total_seconds:.1f} s, {result.tool_calls} tool calls)")
            if on_result is not None:
                on_result(result)

        async with anyio.create_task_group() as tg:
            for task, n in todo:
                tg.start_soon(one, task, n)
    results = load_results(run_dir)
    write_summary(run_dir, config, results)
    provenance.finish(run_dir)
    return results
