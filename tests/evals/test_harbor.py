"""The smoke suite under Harbor: `python -m evals export-harbor`, then Harbor itself runs the exported tasks on
docker with its oracle (every task scores 1.0) and its `nop` agent (nothing done: every task scores 0), and with
coder-agent's Harbor agent (`evals/harbor_agent.py`, installed from this checkout's wheel) against golden and
null scripts served here on docker's bridge: 1.0 and 0.0, as in our harness. The Harbor job then reads back
into our reports (`show`, `compare`).

About 3 minutes on an idle 2-core machine (Harbor's own start and teardown, a container per trial, the agent's
install from the wheel and a wheelhouse); the oracle and nop jobs run all 12 tasks, four at a time each.

Needs docker and Harbor (`bash evals/docker/setup.sh --harbor`; EVALS_HARBOR names the `harbor` command, by
default the one that script installs). Skips without them, unless EVALS_REQUIRE_DOCKER=1 (CI).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from rich.console import Console

from coder_agent.scripted.script import Script
from coder_agent.scripted.server import ScriptedModelServer
from evals.harness import RunConfig, run_eval
from evals.harness.cli import main
from evals.harness.config import REPO_ROOT
from evals.harness.docker import (
    BASE_IMAGE,
    bridge_gateway,
    build_wheel,
    image_exists,
    unavailable_reason,
    wheelhouse,
)
from evals.harness.runs import LoadedRun, load_run
from evals.harness.suite import load_suite

pytestmark = [pytest.mark.e2e, pytest.mark.containers]

DEFAULT_HARBOR = "/var/tmp/coder-agent-evals-harbor/bin/harbor"
JOB_TIMEOUT = 900.0
# plan-only: the mode (plan, from task.toml's environment) and the plan file rebuilt from the runner's log;
# question-no-edit: an answer that names no port fails, as it does in our harness.
GOLDEN_TASK, NULL_TASK = "plan-only", "question-no-edit"


def _harbor_or_skip() -> str:
    harbor = os.environ.get("EVALS_HARBOR") or DEFAULT_HARBOR
    reason = unavailable_reason()
    if reason is None and not image_exists(BASE_IMAGE):
        reason = f"there is no image {BASE_IMAGE}: run `bash evals/docker/setup.sh --harbor`"
    if reason is None and shutil.which(harbor) is None:
        reason = f"no Harbor at {harbor}: run `bash evals/docker/setup.sh --harbor` or set EVALS_HARBOR"
    if reason is None:
        return harbor
    if os.environ.get("EVALS_REQUIRE_DOCKER"):
        pytest.fail(f"EVALS_REQUIRE_DOCKER is set and the Harbor tests cannot run: {reason}")
    pytest.skip(f"no Harbor here: {reason}")


@dataclass
class Jobs:
    root: Path
    oracle: LoadedRun
    nop: LoadedRun
    golden: LoadedRun
    null: LoadedRun


def _harbor(harbor: str, jobs: Path, name: str, *args: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    log = (jobs / f"{name}.log").open("wb")
    command = [harbor, "run", "-o", str(jobs), "--job-name", name, "-y", "-q", *args]
    return subprocess.Popen(command, cwd=jobs, env=env, stdout=log, stderr=subprocess.STDOUT)


def _coder_agent(task: str, tasks: Path, wheel: Path, wheels: Path, api_base: str) -> list[str]:
    return [
        *("-p", str(tasks), "-i", task, "-n", "1"),
        *("-a", "evals.harbor_agent:CoderAgent", "-m", "openai/scripted"),
        *("--ak", f"wheel={wheel}", "--ak", f"wheelhouse={wheels}"),
        *("--ae", f"CODER_AGENT_API_BASE={api_base}", "--ae", "CODER_AGENT_API_KEY=sk-offline"),
        *("--ae", "CODER_AGENT_MAX_RETRIES=0", "--ae", "LITELLM_LOCAL_MODEL_COST_MAP=True"),
    ]


@pytest.fixture(scope="module")
def jobs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Jobs]:
    harbor = _harbor_or_skip()
    root = tmp_path_factory.mktemp("harbor")
    tasks, jobs_dir = root / "tasks", root / "jobs"
    jobs_dir.mkdir()
    assert main(["export-harbor", "--suite", "smoke", "--out", str(tasks)]) == 0
    (root / "wheel").mkdir()
    wheel = build_wheel(root / "wheel")
    wheels = wheelhouse(BASE_IMAGE)  # the dependencies, for an install without an index (as CI's is)
    smoke = {task.id: task for task in load_suite("smoke").tasks()}
    gateway = bridge_gateway()
    golden = ScriptedModelServer(Script.load(smoke[GOLDEN_TASK].script("golden")), host=gateway)
    null = ScriptedModelServer(Script.load(smoke[NULL_TASK].script("null")), host=gateway)
    with golden, null:
        running = {
            "oracle": _harbor(harbor, jobs_dir, "oracle", "-p", str(tasks), "-a", "oracle", "-n", "4"),
            "nop": _harbor(harbor, jobs_dir, "nop", "-p", str(tasks), "-a", "nop", "-n", "4"),
            "golden": _harbor(harbor, jobs_dir, "golden", *_coder_agent(GOLDEN_TASK, tasks, wheel, wheels, golden.url)),
            "null": _harbor(harbor, jobs_dir, "null", *_coder_agent(NULL_TASK, tasks, wheel, wheels, null.url)),
        }
        try:
            for name, process in running.items():
                code = process.wait(timeout=JOB_TIMEOUT)
                log = (jobs_dir / f"{name}.log").read_text(errors="replace")[-3000:]
                assert code == 0, f"harbor job {name} exited {code}:\n{log}"
        finally:
            for process in running.values():
                if process.poll() is None:
                    process.kill()
                    process.wait(timeout=60)
    loaded = {name: load_run(jobs_dir / name) for name in running}
    yield Jobs(root, loaded["oracle"], loaded["nop"], loaded["golden"], loaded["null"])


def _errors(run: LoadedRun) -> str:
    return "\n".join(f"{r.task}: {r.failure_mode} {r.error or ''}" for r in run.results if not r.resolved)


def test_harbors_oracle_scores_every_exported_smoke_task(jobs: Jobs) -> None:
    assert len(jobs.oracle.results) == len(list(load_suite("smoke").tasks())) >= 12
    assert all(r.resolved for r in jobs.oracle.results), _errors(jobs.oracle)


def test_harbors_nop_agent_scores_0_on_every_exported_smoke_task(jobs: Jobs) -> None:
    # The null side of the verifier's contract: an untouched workspace, no answer and no plan fail every task.
    assert len(jobs.nop.results) == len(list(load_suite("smoke").tasks()))
    assert not [r.task for r in jobs.nop.results if r.resolved or r.error is not None]


def test_coder_agent_under_harbor_scores_the_golden_script_1_and_the_null_script_0(jobs: Jobs) -> None:
    [golden] = jobs.golden.results
    assert golden.resolved and golden.stop_reason == "end_turn", _errors(jobs.golden)
    assert golden.input_tokens and golden.output_tokens and golden.cached_tokens == 0  # coder-agent's split
    [null] = jobs.null.results
    assert not null.resolved and null.error is None and null.stop_reason == "end_turn"
    trajectory = jobs.golden.trajectory_path(GOLDEN_TASK, 1)
    assert trajectory is not None and '"ATIF-v1.6"' in trajectory.read_text()


def test_a_harbor_job_comes_back_into_our_reports(jobs: Jobs, capsys: pytest.CaptureFixture[str]) -> None:
    local = jobs.root / "local"
    config = RunConfig(suite="smoke", tasks=[GOLDEN_TASK], offline="golden")

    async def run_local() -> None:
        with anyio.fail_after(300):
            await run_eval(config, local, console=Console(stderr=True, force_terminal=False))

    anyio.run(run_local)
    capsys.readouterr()
    assert main(["compare", str(local), str(jobs.golden.path)]) == 0
    report = capsys.readouterr().out
    assert "B: Harbor job golden" in report and "Tasks in both runs: 1; resolved 1 → 1." in report
    assert main(["show", str(jobs.golden.path), "--trial", GOLDEN_TASK]) == 0
    shown = capsys.readouterr().out
    assert f"| {GOLDEN_TASK} | 1 | yes |" in shown and "calls" in shown
