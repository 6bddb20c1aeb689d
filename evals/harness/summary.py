"""A run's summary: `summary.json` (numbers) and `summary.md` (the same as Markdown tables)."""

from __future__ import annotations

import json
from collections import Counter
from itertools import groupby
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from .config import RunConfig
from .results import TrialResult
from .stats import mean, pass_at_k, wilson_interval


class Stats(BaseModel):
    """Figures over a group of trials: one task's, or the whole run's."""

    trials: int
    resolved: int
    resolved_rate: float
    ci95: tuple[float, float]
    pass_at_1: float | None
    pass_at_k: float | None
    stop_reasons: dict[str, int]
    failure_modes: dict[str, int]
    mean_tokens: float | None
    mean_cost_usd: float | None
    total_cost_usd: float | None
    mean_wall_seconds: float | None
    mean_tool_calls: float | None
    violations: int


def _counts(values: list[str | None]) -> dict[str, int]:
    return dict(Counter(value or "none" for value in values).most_common())


def group_stats(results: list[TrialResult], pass_values: list[tuple[float, float | None]]) -> Stats:
    n, c = len(results), sum(r.resolved for r in results)
    costs = [r.cost_usd for r in results if r.cost_usd is not None]
    k_values = [value for _, value in pass_values if value is not None]
    return Stats(
        trials=n,
        resolved=c,
        resolved_rate=c / n if n else 0.0,
        ci95=wilson_interval(c, n),
        pass_at_1=mean([one for one, _ in pass_values]),
        pass_at_k=mean(k_values) if len(k_values) == len(pass_values) else None,
        stop_reasons=_counts([r.stop_reason for r in results]),
        failure_modes=_counts([r.failure_mode for r in results]),
        mean_tokens=mean([float(r.tokens) for r in results]),
        mean_cost_usd=mean(costs),
        total_cost_usd=sum(costs) if costs else None,
        mean_wall_seconds=mean([r.wall_seconds for r in results]),
        mean_tool_calls=mean([float(r.tool_calls) for r in results]),
        violations=sum(len(r.schema_violations) + len(r.protocol_violations) for r in results),
    )


def summarize(config: RunConfig, results: list[TrialResult]) -> dict[str, Any]:
    k = config.trials
    tasks: dict[str, Stats] = {}
    per_task_pass: list[tuple[float, float | None]] = []
    for task, group in groupby(sorted(results, key=lambda r: r.task), key=lambda r: r.task):
        trials = list(group)
        n, c = len(trials), sum(r.resolved for r in trials)
        values = (pass_at_k(n, c, 1), pass_at_k(n, c, k) if n >= k else None)
        per_task_pass.append(values)
        tasks[task] = group_stats(trials, [values])
    overall = group_stats(results, per_task_pass)
    return {
        "config": config.model_dump(),
        "model": config.model_name,
        "k": k,
        "overall": overall.model_dump(),
        "tasks": {name: stats.model_dump() for name, stats in tasks.items()},
    }


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _num(value: float | None, digits: int = 1, prefix: str = "") -> str:
    return "-" if value is None else f"{prefix}{value:,.{digits}f}"


def _short(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {count}" for name, count in counts.items() if name != "none") or "-"


def _row(name: str, s: dict[str, Any], k: int) -> str:
    low, high = s["ci95"]
    cells = [
        name,
        f"{s['resolved']}/{s['trials']}",
        f"{_pct(s['resolved_rate'])} [{_pct(low)}, {_pct(high)}]",
        _pct(s["pass_at_1"]),
        *([_pct(s["pass_at_k"])] if k > 1 else []),
        _short(s["stop_reasons"]),
        _short(s["failure_modes"]),
        _num(s["mean_tokens"], 0),
        _num(s["mean_cost_usd"], 4, "$"),
        _num(s["mean_wall_seconds"]),
        str(s["violations"]),
    ]
    return "| " + " | ".join(cells) + " |"


def render_markdown(summary: dict[str, Any]) -> str:
    config, k = summary["config"], summary["k"]
    pass_k = f" pass@{k} |" if k > 1 else ""
    head = (
        f"| task | resolved | resolved % [95% Wilson] | pass@1 |{pass_k} stop reasons | failure modes"
        " | tokens/trial | cost/trial | agent s/trial | violations |"
    )
    lines = [
        f"# {config['suite']}: {summary['model']} ({config['profile']} client)",
        "",
        f"{config['trials']} trial(s) per task, {config['workers']} worker(s), retries {config['retries']},"
        f" permission policy {config['permission']}.",
        "",
        head,
        "|" + " --- |" * (11 if k > 1 else 10),
        _row("**all**", summary["overall"], k),
        *(_row(name, stats, k) for name, stats in summary["tasks"].items()),
        "",
    ]
    return "\n".join(lines)


def write_summary(run_dir: Path, config: RunConfig, results: list[TrialResult]) -> dict[str, Any]:
    summary = summarize(config, results)
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    (run_dir / "summary.md").write_text(render_markdown(summary), encoding="utf-8")
    return summary
