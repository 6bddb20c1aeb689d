"""A run records what it needs to be reproduced (provenance.json), each trial its tokens and an ATIF trajectory,
and `python -m evals show RUN` renders it: one smoke trial through the real agent, here."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import anyio
import pytest
from rich.console import Console

from coder_agent.scripted.script import Script, TextStep
from evals.harness import RunConfig, TrialResult, run_eval
from evals.harness.cli import main
from evals.harness.config import REPO_ROOT
from evals.harness.provenance import task_digest
from evals.harness.results import trial_dir
from evals.harness.suite import load_suite
from evals.harness.task import Task

pytestmark = pytest.mark.e2e

TASK = "off-by-one"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, TrialResult]:
    run_dir = tmp_path_factory.mktemp("reproducible") / "run"
    config = RunConfig(suite="smoke", tasks=[TASK], offline="golden")

    async def go() -> list[TrialResult]:
        with anyio.fail_after(300):
            return await run_eval(config, run_dir, console=Console(stderr=True, force_terminal=False))

    [result] = anyio.run(go)
    return run_dir, result


def test_provenance_names_the_agent_commit_model_suite_versions_date_machine_and_sandbox(
    run: tuple[Path, TrialResult],
) -> None:
    run_dir, _ = run
    facts = json.loads((run_dir / "provenance.json").read_text())
    head = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    assert facts["agent"]["commit"] == head.strip() and facts["agent"]["version"]
    assert facts["model"]["name"] == "scripted-golden" and facts["model"]["per_task"][TASK]["max_turn_requests"] == 30
    [task] = [t for t in load_suite("smoke").tasks() if t.id == TASK]
    assert facts["suite"] == {"name": "smoke", "tasks": {TASK: task_digest(task)}}
    assert facts["started_at"] <= facts["finished_at"]
    assert facts["machine"]["cpus"] and facts["machine"]["python"] and facts["sandbox"] == {"kind": "local"}


def test_a_task_version_changes_with_any_of_its_files(tmp_path: Path) -> None:
    [task] = [t for t in load_suite("smoke").tasks() if t.id == TASK]
    copy = tmp_path / TASK
    shutil.copytree(REPO_ROOT / "evals" / "suites" / "smoke" / TASK, copy)
    assert task_digest(Task.from_dir(copy)) == task_digest(task)
    (copy / "tests" / "test_hidden_pager.py").write_text("# changed\n", encoding="utf-8")
    assert task_digest(Task.from_dir(copy)) != task_digest(task)


def test_each_trial_has_its_token_split_and_a_trajectory_of_its_model_calls(run: tuple[Path, TrialResult]) -> None:
    run_dir, result = run
    assert result.resolved and result.input_tokens and result.output_tokens and result.cached_tokens == 0
    trajectory = json.loads((trial_dir(run_dir, TASK, 1) / "trajectory.json").read_text())
    assert trajectory["schema_version"] == "ATIF-v1.6" and trajectory["agent"]["name"] == "coder-agent"
    steps = trajectory["steps"]
    [task] = [t for t in load_suite("smoke").tasks() if t.id == TASK]
    assert steps[0] == {"step_id": 1, "source": "user", "message": task.instruction}
    calls = [s for s in steps if "prompt_tokens" in (s.get("metrics") or {})]
    assert len(calls) == result.model_requests
    assert sum(s["metrics"]["prompt_tokens"] for s in calls) == result.input_tokens
    assert sum(s["metrics"]["completion_tokens"] for s in calls) == result.output_tokens
    final = Script.load(task.script("golden")).replies[-1]
    final_text = "".join(piece for step in final.steps if isinstance(step, TextStep) for piece in step.pieces)
    assert calls[-1]["message"] == final_text
    commands = [c["arguments"].get("command") for s in steps for c in s.get("tool_calls") or []]
    assert "python -m pytest -q" in commands
    [pytest_step] = [s for s in steps if any(c["arguments"].get("command") for c in s.get("tool_calls") or [])]
    assert "2 passed" in pytest_step["observation"]["results"][0]["content"]  # the terminal's output


def test_show_renders_a_run_and_a_trials_trajectory(
    run: tuple[Path, TrialResult], capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir, result = run
    assert main(["show", str(run_dir), "--trial", f"{TASK}/1"]) == 0
    shown = capsys.readouterr().out
    facts = json.loads((run_dir / "provenance.json").read_text())
    assert f"commit {facts['agent']['commit']}" in shown and "sandbox: local" in shown
    assert f"| {TASK} | 1 | yes | - | {result.input_tokens} | 0 | {result.output_tokens} |" in shown
    assert "calls execute" in shown and "2 passed" in shown
    assert main(["show", str(run_dir), "--trial", "nope"]) == 2
    assert "has no trial nope/1" in capsys.readouterr().err
