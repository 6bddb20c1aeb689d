"""What a run reports: the statistics, summary.md, compare, export-preds, failure modes and resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals.harness.compare import compare_runs
from evals.harness.config import RunConfig
from evals.harness.export import export_preds
from evals.harness.results import Attempt, TrialResult, failure_mode, load_results, trial_dir
from evals.harness.runner import pending_trials
from evals.harness.stats import pass_at_k, wilson_interval
from evals.harness.suite import load_suite
from evals.harness.summary import write_summary


def test_the_wilson_interval_matches_known_values() -> None:
    low, high = wilson_interval(0, 10)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)
    assert wilson_interval(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_pass_at_k_is_the_unbiased_estimator() -> None:
    assert pass_at_k(5, 0, 1) == 0.0
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)
    assert pass_at_k(5, 2, 3) == pytest.approx(1 - 1 / 10)  # 1 - C(3,3)/C(5,3)
    assert pass_at_k(5, 3, 3) == 1.0
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def _result(task: str, trial: int, resolved: bool, cost: float, seconds: float, **fields: object) -> TrialResult:
    attempt = Attempt(stop_reason="end_turn", passed=resolved, verifier_exit_code=0 if resolved else 1)
    result = TrialResult(
        task=task,
        trial=trial,
        profile="editor",
        model="test-model",
        resolved=resolved,
        stop_reason="end_turn",
        cost_usd=cost,
        wall_seconds=seconds,
        tokens=1000,
        attempts=[attempt],
        **fields,  # type: ignore[arg-type]
    )
    result.failure_mode = failure_mode(result)
    return result


def _write_run(run_dir: Path, outcomes: dict[str, list[bool]], cost: float, seconds: float) -> RunConfig:
    config = RunConfig(suite="smoke", model="test-model", trials=len(next(iter(outcomes.values()))))
    run_dir.mkdir(parents=True)
    config.save(run_dir)
    for task, resolved in outcomes.items():
        for n, ok in enumerate(resolved, start=1):
            folder = trial_dir(run_dir, task, n)
            folder.mkdir(parents=True)
            _result(task, n, ok, cost, seconds).save(folder)
            (folder / "model.patch").write_text(f"diff for {task} #{n}\n")
    write_summary(run_dir, config, load_results(run_dir))
    return config


def test_the_summary_reports_rates_intervals_and_pass_at_k(tmp_path: Path) -> None:
    _write_run(tmp_path / "run", {"a": [True, False, True], "b": [False, False, False]}, cost=0.25, seconds=10.0)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    overall = summary["overall"]
    assert (overall["trials"], overall["resolved"]) == (6, 2)
    assert overall["pass_at_1"] == pytest.approx((2 / 3 + 0) / 2)
    assert overall["pass_at_k"] == pytest.approx(0.5)  # a: pass@3 = 1, b: 0
    assert overall["failure_modes"] == {"verifier_failed": 4, "none": 2}
    assert summary["tasks"]["a"]["mean_cost_usd"] == 0.25
    markdown = (tmp_path / "run" / "summary.md").read_text()
    assert "| a | 2/3 | 66.7% [20.8%, 93.9%] | 66.7% | 100.0% |" in markdown
    assert "pass@3" in markdown


def test_compare_names_fixed_and_broken_tasks_and_the_deltas(tmp_path: Path) -> None:
    _write_run(tmp_path / "A", {"a": [False], "b": [True], "c": [True]}, cost=0.5, seconds=20.0)
    _write_run(tmp_path / "B", {"a": [True], "b": [False], "c": [True]}, cost=0.25, seconds=12.0)
    report = compare_runs(tmp_path / "A", tmp_path / "B")
    assert "Fixed (1): a" in report and "Broken (1): b" in report
    assert "| c | 100% | 100% | 0.5000 | 0.2500 | -0.2500 | 20.0 | 12.0 | -8.0 |" in report


def test_export_preds_writes_swe_bench_predictions(tmp_path: Path) -> None:
    _write_run(tmp_path / "run", {"a": [True, False], "b": [False, True]}, cost=0.1, seconds=1.0)
    assert export_preds(tmp_path / "run", tmp_path / "preds.jsonl", trial=2) == 2
    rows = [json.loads(line) for line in (tmp_path / "preds.jsonl").read_text().splitlines()]
    assert rows == [
        {"instance_id": "a", "model_name_or_path": "test-model", "model_patch": "diff for a #2\n"},
        {"instance_id": "b", "model_name_or_path": "test-model", "model_patch": "diff for b #2\n"},
    ]


def test_failure_modes_follow_the_last_attempt_and_violations_come_first() -> None:
    timed_out = _result("a", 1, False, 0, 0)
    timed_out.attempts[-1].limit_hit = "timeout"
    assert failure_mode(timed_out) == "timeout"
    capped = _result("a", 1, False, 0, 0)
    capped.attempts[-1].stop_reason = "max_turn_requests"
    assert failure_mode(capped) == "max_turn_requests"
    crashed = _result("a", 1, False, 0, 0)
    crashed.attempts[-1].error = "the agent exited during the turn"
    assert failure_mode(crashed) == "agent_error"
    dirty = _result("a", 1, True, 0, 0, schema_violations=["agent line 3: bad"])
    assert failure_mode(dirty) == "schema_violation"


def test_resume_runs_only_the_trials_without_a_result(tmp_path: Path) -> None:
    tasks = list(load_suite("smoke").tasks())[:2]
    config = RunConfig(suite="smoke", offline="golden", trials=2)
    folder = trial_dir(tmp_path, tasks[0].id, 2)
    folder.mkdir(parents=True)
    _result(tasks[0].id, 2, True, 0, 0).save(folder)
    trial_dir(tmp_path, tasks[1].id, 1).mkdir(parents=True)  # cut off half-way: no result.json
    todo = [(task.id, n) for task, n in pending_trials(config, tasks, tmp_path)]
    assert todo == [(tasks[0].id, 1), (tasks[1].id, 1), (tasks[1].id, 2)]
