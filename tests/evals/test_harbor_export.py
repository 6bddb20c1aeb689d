"""`python -m evals export-harbor` and reading Harbor's results back, without docker or Harbor here: the exported
files, the verifier's environment contract (answer and plan files rebuilt from the runner's log of a real Harbor
job, `tests/fixtures/harbor_job/`), and `show` / `compare` on that job. Harbor itself runs them in
`test_harbor.py`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from evals.harness.cli import main
from evals.harness.compare import compare_runs
from evals.harness.config import RunConfig
from evals.harness.results import Attempt, TrialResult, trial_dir
from evals.harness.runs import load_run
from evals.harness.suite import load_suite

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "harbor_job" / "question-no-edit"


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if "__pycache__" not in p.parts)


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("harbor-tasks")
    assert main(["export-harbor", "--suite", "smoke", "--out", str(out)]) == 0
    return out


def test_every_smoke_task_is_written_as_a_harbor_task(exported: Path) -> None:
    tasks = {task.id: task for task in load_suite("smoke").tasks()}
    assert sorted(p.name for p in exported.iterdir()) == sorted(tasks)
    for task_id, task in tasks.items():
        folder = exported / task_id
        config = tomllib.loads((folder / "task.toml").read_text())
        assert config["agent"]["timeout_sec"] == task.config.limits.wall_clock_seconds
        assert config["verifier"]["timeout_sec"] == task.config.timeouts.verifier_seconds
        env = config["environment"]["env"]
        assert env["CODER_AGENT_MAX_TURN_REQUESTS"] == str(task.config.limits.max_turn_requests)
        assert env.get("CODER_AGENT_DEFAULT_MODE") == task.config.mode
        assert (folder / "instruction.md").read_text() == task.instruction
        dockerfile = (folder / "environment" / "Dockerfile").read_text()
        assert dockerfile.startswith("FROM coder-agent-evals-base:trixie\n") and "COPY workspace/ /app/" in dockerfile
        # Harbor's container runs `sh -c "sleep infinity"` as pid 1, which ignores SIGTERM: without this, each
        # trial's teardown waits out docker's 10 s stop timeout.
        assert "\nSTOPSIGNAL SIGKILL\n" in dockerfile
        assert _tree(folder / "environment" / "workspace") == _tree(task.workspace_dir)
        assert os.access(folder / "tests" / "test.sh", os.X_OK) and os.access(folder / "solution" / "solve.sh", os.X_OK)
        assert (folder / "tests" / "original").is_dir() and (folder / "tests" / "hidden").is_dir()


def _contract_env(folder: Path, workspace: Path, answer: Path, plan: Path) -> dict[str, str]:
    """The variables test.sh sets, with this machine's folders for /app, /tests and /logs."""
    return {
        **os.environ,
        "EVAL_WORKSPACE": str(workspace),
        "EVAL_TESTS_DIR": str(folder / "tests" / "hidden"),
        "EVAL_ORIGINAL_WORKSPACE": str(folder / "tests" / "original"),
        "EVAL_TRIAL_DIR": str(workspace.parent),
        "EVAL_ANSWER_FILE": str(answer),
        "EVAL_PLAN_FILE": str(plan),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }


def test_the_answer_an_acp_agent_gave_under_harbor_is_rebuilt_for_the_verifier(exported: Path, tmp_path: Path) -> None:
    folder = exported / "question-no-edit"
    workspace = tmp_path / "app"
    shutil.copytree(folder / "environment" / "workspace", workspace)
    answer, plan = tmp_path / "logs" / "agent_answer.txt", tmp_path / "logs" / "agent_plan.json"
    [events] = FIXTURE.glob("*/agent/acp-events.jsonl")
    rebuild = [sys.executable, str(folder / "tests" / "eval_outputs.py"), str(events), str(answer), str(plan)]
    subprocess.run(rebuild, check=True, timeout=60)
    chunks = [
        json.loads(line)["payload"]["update"]["content"]["text"]
        for line in events.read_text().splitlines()
        if '"agent_message_chunk"' in line
    ]
    assert answer.read_text() == "".join(chunks) and not plan.exists()
    task = next(t for t in load_suite("smoke").tasks() if t.id == "question-no-edit")
    env = _contract_env(folder, workspace, answer, plan)
    verifier = ["/bin/sh", "-c", task.config.verifier.command]
    assert subprocess.run(verifier, cwd=workspace, env=env, timeout=60, check=False).returncode == 0
    answer.write_text("I could not work it out.")
    assert subprocess.run(verifier, cwd=workspace, env=env, timeout=60, check=False).returncode != 0


def test_a_harbor_job_reads_as_a_run_with_coder_agents_token_split(tmp_path: Path) -> None:
    run = load_run(FIXTURE)
    [trial] = run.results
    [raw] = (json.loads(p.read_text()) for p in FIXTURE.glob("*/result.json"))
    assert (trial.task, trial.trial, trial.resolved, trial.stop_reason) == ("question-no-edit", 1, True, "end_turn")
    assert raw["verifier_result"]["rewards"]["reward"] == 1.0
    [events] = FIXTURE.glob("*/agent/acp-events.jsonl")
    updates = [json.loads(line).get("payload", {}).get("update") or {} for line in events.read_text().splitlines()]
    splits = [u["_meta"]["coder-agent"]["usage"] for u in updates if u.get("sessionUpdate") == "usage_update"]
    assert splits and trial.input_tokens == sum(s["inputTokens"] for s in splits)
    assert trial.output_tokens == sum(s["outputTokens"] for s in splits) and trial.cached_tokens == 0


def test_show_and_compare_take_a_harbor_job(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(FIXTURE), "--trial", "question-no-edit"]) == 0
    shown = capsys.readouterr().out
    assert "# Harbor job" in shown and "| question-no-edit | 1 | yes |" in shown
    assert "calls search" in shown and "8473" in shown  # the runner's trajectory: the grep, then the answer
    local = tmp_path / "local"
    local.mkdir()
    RunConfig(suite="smoke", model="m").save(local)
    folder = trial_dir(local, "question-no-edit", 1)
    folder.mkdir(parents=True)
    attempt = Attempt(stop_reason="end_turn", passed=False, verifier_exit_code=1)
    TrialResult(task="question-no-edit", trial=1, profile="editor", model="m", attempts=[attempt]).save(folder)
    report = compare_runs(local, FIXTURE)
    assert "Fixed (1): question-no-edit" in report and "B: Harbor job" in report
