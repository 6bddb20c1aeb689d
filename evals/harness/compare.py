"""`python -m evals compare RUN_A RUN_B`: what changed from run A to run B (either may be a Harbor job folder).

A task counts as resolved in a run when at least half of its trials resolved. "Fixed" tasks resolve in B
but not in A, "broken" ones the other way round. Cost and agent time are compared per trial, task by task.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .results import TrialResult
from .runs import load_run
from .stats import mean


@dataclass(frozen=True)
class TaskFigures:
    rate: float
    cost: float | None
    seconds: float | None

    @property
    def resolved(self) -> bool:
        return self.rate >= 0.5


def figures(results: list[TrialResult]) -> dict[str, TaskFigures]:
    by_task: defaultdict[str, list[TrialResult]] = defaultdict(list)
    for result in results:
        by_task[result.task].append(result)
    return {
        task: TaskFigures(
            rate=sum(r.resolved for r in trials) / len(trials),
            cost=mean([r.cost_usd for r in trials if r.cost_usd is not None]),
            seconds=mean([r.wall_seconds for r in trials]),
        )
        for task, trials in sorted(by_task.items())
    }


def _delta(a: float | None, b: float | None, digits: int, unit: str = "") -> str:
    if a is None or b is None:
        return "-"
    return f"{b - a:+,.{digits}f}{unit}"


def _known(values: Iterable[float | None]) -> list[float]:
    return [value for value in values if value is not None]


def _fmt(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def compare_runs(run_a: Path, run_b: Path) -> str:
    """The comparison as Markdown."""
    loaded_a, loaded_b = load_run(run_a), load_run(run_b)
    a, b = figures(loaded_a.results), figures(loaded_b.results)
    common = sorted(set(a) & set(b))
    fixed = [task for task in common if b[task].resolved and not a[task].resolved]
    broken = [task for task in common if a[task].resolved and not b[task].resolved]
    solved_a = sum(a[task].resolved for task in common)
    solved_b = sum(b[task].resolved for task in common)
    lines = [
        f"# {run_a.name} → {run_b.name}",
        "",
        f"A: {loaded_a.title}. B: {loaded_b.title}.",
        "",
        f"Tasks in both runs: {len(common)}; resolved {solved_a} → {solved_b}.",
        f"Fixed ({len(fixed)}): {', '.join(fixed) or '-'}",
        f"Broken ({len(broken)}): {', '.join(broken) or '-'}",
    ]
    only = sorted(set(a) ^ set(b))
    if only:
        lines.append(f"In one run only (not compared): {', '.join(only)}")
    lines += [
        "",
        "| task | resolved A | resolved B | cost/trial A | cost/trial B | Δ cost | agent s A | agent s B | Δ s |",
        "|" + " --- |" * 9,
    ]
    for task in common:
        x, y = a[task], b[task]
        cells = [
            task,
            f"{100 * x.rate:.0f}%",
            f"{100 * y.rate:.0f}%",
            _fmt(x.cost, 4),
            _fmt(y.cost, 4),
            _delta(x.cost, y.cost, 4),
            _fmt(x.seconds, 1),
            _fmt(y.seconds, 1),
            _delta(x.seconds, y.seconds, 1),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    cost_a = _known(a[t].cost for t in common)
    cost_b = _known(b[t].cost for t in common)
    seconds_a = _known(a[t].seconds for t in common)
    seconds_b = _known(b[t].seconds for t in common)
    lines += [
        "",
        f"Mean cost per trial: {_fmt(mean(cost_a), 4)} → {_fmt(mean(cost_b), 4)}"
        f" ({_delta(mean(cost_a), mean(cost_b), 4)}).",
        f"Mean agent seconds per trial: {_fmt(mean(seconds_a), 1)} → {_fmt(mean(seconds_b), 1)}"
        f" ({_delta(mean(seconds_a), mean(seconds_b), 1)}).",
        "",
    ]
    return "\n".join(lines)
