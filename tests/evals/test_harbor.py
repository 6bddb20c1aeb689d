"""The smoke suite under Harbor, as CI runs it: `python -m evals export-harbor`, then one Harbor job of
coder-agent's Harbor agent (`evals/harbor_agent.py`, installed from this checkout's wheel and a wheelhouse) on the
plan-mode task against its golden script served here on docker's bridge: it scores 1.0, with coder-agent's token
split and an ATIF trajectory, and the job reads back into our reports (`show`, `compare`).

Beside that job, every exported task is checked the way Harbor runs it, in one container of the base image
(cheaper than Harbor's 24 trials): the task's solution/solve.sh then tests/test.sh must write reward 1 (Harbor's
oracle), and tests/test.sh on the untouched workspace reward 0 (Harbor's `nop` agent). The null script under
Harbor (the answer rebuilt from the runner's log, judged wrong) is checked without Harbor in
test_harbor_export.py, on the log of a real Harbor job.

EVALS_CONTAINERS_FULL=1 also runs Harbor's own oracle and `nop` agents on all 12 tasks and coder-agent with the
null script (three more Harbor jobs, a few minutes): a longer local run.

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
from typing import Literal

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
    LABEL,
    agent_wheel,
    bridge_gateway,
    image_exists,
    unavailable_reason,
    wheelhouse,
)
from evals.harness.runs import LoadedRun, load_run
from evals.harness.suite import load_suite

pytestmark = [pytest.mark.e2e, pytest.mark.containers]

DEFAULT_HARBOR = "/var/tmp/coder-agent-evals-harbor/bin/harbor"
JOB_TIMEOUT = 900.0
GOLDEN_TASK, NULL_TASK = "plan-only", "question-no-edit"
FULL = os.environ.get("EVALS_CONTAINERS_FULL") == "1"


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


# Each exported task as Harbor runs it (harbor/agents/oracle.py, harbor/verifier/verifier.py): the image's
# Dockerfile steps (COPY workspace/ /app/, then its RUN), the solution and tests uploaded to /solution and
# /tests, each script run as `(SCRIPT) > LOG 2>&1` in the workdir as root, the reward read from
# /logs/verifier/reward.txt. `nop` does nothing before the verifier.
EXPORT_CHECK = r"""
set -u
for folder in /export/*/; do
    task=$(basename "$folder")
    for mode in oracle nop; do
        rm -rf /app /tests /solution /logs && mkdir -p /logs/agent /logs/verifier
        cp -r --preserve=mode,timestamps "$folder/environment/workspace" /app
        cp -r --preserve=mode,timestamps "$folder/tests" /tests
        cd /app
        sh -ec "$(sed -n 's/^RUN //p' "$folder/environment/Dockerfile")" >/logs/build.txt 2>&1 || cat /logs/build.txt
        if [ "$mode" = oracle ]; then
            cp -r --preserve=mode,timestamps "$folder/solution" /solution && chmod +x /solution/solve.sh
            (/solution/solve.sh) >/logs/agent/oracle.txt 2>&1 || cat /logs/agent/oracle.txt
        fi
        chmod +x /tests/test.sh && (/tests/test.sh) >/logs/verifier/test-stdout.txt 2>&1
        reward=$(cat /logs/verifier/reward.txt 2>/dev/null || echo none)
        echo "reward $task $mode $reward"
        want=0; [ "$mode" = oracle ] && want=1
        [ "$reward" = "$want" ] || cat /logs/verifier/test-stdout.txt
    done
done
"""


@dataclass
class Harbor:
    root: Path
    tasks: Path
    golden: LoadedRun
    rewards: dict[str, dict[str, str]]  # "oracle" / "nop" -> task -> reward.txt
    check_output: str


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


def _wait(running: dict[str, subprocess.Popen[bytes]], jobs: Path) -> None:
    try:
        for name, process in running.items():
            code = process.wait(timeout=JOB_TIMEOUT)
            log = (jobs / f"{name}.log").read_text(errors="replace")[-3000:]
            assert code == 0, f"{name} exited {code}:\n{log}"
    finally:
        for process in running.values():
            if process.poll() is None:
                process.kill()
                process.wait(timeout=60)


def _scripted(task: str, kind: Literal["golden", "null"]) -> ScriptedModelServer:
    smoke = {t.id: t for t in load_suite("smoke").tasks()}
    return ScriptedModelServer(Script.load(smoke[task].script(kind)), host=bridge_gateway())


@pytest.fixture(scope="module")
def harbor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harbor]:
    command = _harbor_or_skip()
    root = tmp_path_factory.mktemp("harbor")
    tasks, jobs = root / "tasks", root / "jobs"
    jobs.mkdir()
    assert main(["export-harbor", "--suite", "smoke", "--out", str(tasks)]) == 0
    wheels = wheelhouse(BASE_IMAGE)  # the dependencies, for an install without an index
    with _scripted(GOLDEN_TASK, "golden") as golden:
        running = {
            "golden": _harbor(
                command, jobs, "golden", *_coder_agent(GOLDEN_TASK, tasks, agent_wheel(), wheels, golden.url)
            ),
            "export-check": subprocess.Popen(
                [
                    *("docker", "run", "--rm", "--label", LABEL, "--network", "none"),
                    *("-v", f"{tasks}:/export:ro", BASE_IMAGE, "sh", "-c", EXPORT_CHECK),
                ],
                stdout=(jobs / "export-check.log").open("wb"),
                stderr=subprocess.STDOUT,
            ),
        }
        _wait(running, jobs)
    output = (jobs / "export-check.log").read_text(errors="replace")
    rewards: dict[str, dict[str, str]] = {"oracle": {}, "nop": {}}
    for line in output.splitlines():
        if line.startswith("reward "):
            _, task, mode, reward = line.split()
            rewards[mode][task] = reward
    yield Harbor(root, tasks, load_run(jobs / "golden"), rewards, output)


def _errors(run: LoadedRun) -> str:
    return "\n".join(f"{r.task}: {r.failure_mode} {r.error or ''}" for r in run.results if not r.resolved)


def test_every_exported_task_scores_1_with_its_oracle_and_0_untouched(harbor: Harbor) -> None:
    smoke = sorted(task.id for task in load_suite("smoke").tasks())
    assert len(smoke) >= 12
    assert harbor.rewards["oracle"] == dict.fromkeys(smoke, "1"), harbor.check_output[-4000:]
    # The null side of the verifier's contract: an untouched workspace, no answer and no plan fail every task.
    assert harbor.rewards["nop"] == dict.fromkeys(smoke, "0"), harbor.check_output[-4000:]


def test_coder_agent_under_harbor_scores_the_golden_script_1(harbor: Harbor) -> None:
    [golden] = harbor.golden.results
    # plan-only: the mode (plan, from task.toml's environment) held, and the plan file rebuilt from the runner's log
    assert golden.resolved and golden.stop_reason == "end_turn", _errors(harbor.golden)
    assert golden.input_tokens and golden.output_tokens and golden.cached_tokens == 0  # coder-agent's split
    trajectory = harbor.golden.trajectory_path(GOLDEN_TASK, 1)
    assert trajectory is not None and '"ATIF-v1.6"' in trajectory.read_text()


def test_a_harbor_job_comes_back_into_our_reports(harbor: Harbor, capsys: pytest.CaptureFixture[str]) -> None:
    local = harbor.root / "local"
    config = RunConfig(suite="smoke", tasks=[GOLDEN_TASK], offline="golden")

    async def run_local() -> None:
        with anyio.fail_after(300):
            await run_eval(config, local, console=Console(stderr=True, force_terminal=False))

    anyio.run(run_local)
    capsys.readouterr()
    assert main(["compare", str(local), str(harbor.golden.path)]) == 0
    report = capsys.readouterr().out
    assert "B: Harbor job golden" in report and "Tasks in both runs: 1; resolved 1 → 1." in report
    assert main(["show", str(harbor.golden.path), "--trial", GOLDEN_TASK]) == 0
    shown = capsys.readouterr().out
    assert f"| {GOLDEN_TASK} | 1 | yes |" in shown and "calls" in shown


@pytest.mark.skipif(not FULL, reason="a longer local run: EVALS_CONTAINERS_FULL=1")
def test_harbors_oracle_and_nop_agents_and_the_null_script_under_harbor(harbor: Harbor) -> None:
    command = _harbor_or_skip()
    jobs = harbor.root / "full-jobs"
    jobs.mkdir()
    with _scripted(NULL_TASK, "null") as null:
        running = {
            "oracle": _harbor(command, jobs, "oracle", "-p", str(harbor.tasks), "-a", "oracle", "-n", "4"),
            "nop": _harbor(command, jobs, "nop", "-p", str(harbor.tasks), "-a", "nop", "-n", "4"),
            "null": _harbor(
                command,
                jobs,
                "null",
                *_coder_agent(NULL_TASK, harbor.tasks, agent_wheel(), wheelhouse(BASE_IMAGE), null.url),
            ),
        }
        _wait(running, jobs)
    oracle, nop = load_run(jobs / "oracle"), load_run(jobs / "nop")
    assert len(oracle.results) == len(nop.results) == len(list(load_suite("smoke").tasks()))
    assert all(r.resolved for r in oracle.results), _errors(oracle)
    assert not [r.task for r in nop.results if r.resolved or r.error is not None]
    # question-no-edit: an answer that names no port fails, as it does in our harness.
    [result] = load_run(jobs / "null").results
    assert not result.resolved and result.error is None and result.stop_reason == "end_turn"
