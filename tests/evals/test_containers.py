"""`python -m evals run --sandbox docker`: each trial's agent, its commands and the verifier in a container, with
the harness still the ACP client (every line schema-checked, modes, profiles, permission policy).

Needs a docker daemon and the base image (`bash evals/docker/setup.sh`). Where there is none, these tests skip
and say why; CI sets EVALS_REQUIRE_DOCKER=1, which makes that a failure instead (.ci/run sets docker up first).
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Literal

import anyio
import pytest
from rich.console import Console

from evals.harness import RunConfig, TrialResult, run_eval
from evals.harness.docker import BASE_IMAGE, image_exists, unavailable_reason
from evals.harness.results import trial_dir
from evals.harness.scripting import call, golden
from evals.harness.wire import methods

pytestmark = [pytest.mark.e2e, pytest.mark.containers]

WORKERS = 2
RUN_TIMEOUT = 900.0  # the first run builds the agent's image (its dependencies: about a minute)


def _docker_or_skip() -> None:
    reason = unavailable_reason()
    if reason is None and not image_exists(BASE_IMAGE):
        reason = f"there is no image {BASE_IMAGE}: run `bash evals/docker/setup.sh`"
    if reason is None:
        return
    if os.environ.get("EVALS_REQUIRE_DOCKER"):
        pytest.fail(f"EVALS_REQUIRE_DOCKER is set and the container tests cannot run: {reason}")
    pytest.skip(f"no docker here: {reason}")


def _run(config: RunConfig, run_dir: Path) -> list[TrialResult]:
    async def go() -> list[TrialResult]:
        with anyio.fail_after(RUN_TIMEOUT):
            return await run_eval(config, run_dir, console=Console(stderr=True, force_terminal=False))

    return anyio.run(go)


def _report(results: list[TrialResult]) -> str:
    return "\n".join(f"- {r.task}: {r.failure_mode} stop={r.stop_reason} {r.error or ''}" for r in results)


# What CI runs (three smoke tasks: a fix through the editor's files, plan mode, a command in the editor's
# terminal); EVALS_CONTAINERS_FULL=1 runs every smoke task, in both profiles (a longer local run).
CI_TASKS = ["off-by-one", "plan-only", "terminal-generate"]
FULL = os.environ.get("EVALS_CONTAINERS_FULL") == "1"


@pytest.fixture(scope="module")
def smoke_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, list[TrialResult]]]:
    _docker_or_skip()
    root = tmp_path_factory.mktemp("containers")
    tasks = [] if FULL else CI_TASKS
    plans = {"editor": RunConfig(suite="smoke", tasks=tasks, offline="golden", workers=WORKERS, sandbox="docker")}
    if FULL:
        plans["bare"] = RunConfig(suite="smoke", offline="golden", profile="bare", workers=WORKERS, sandbox="docker")
    return {name: (root / name, _run(config, root / name)) for name, config in plans.items()}


def test_smoke_tasks_resolve_in_containers_with_modes_and_a_clean_wire(
    smoke_runs: dict[str, tuple[Path, list[TrialResult]]],
) -> None:
    for name, (_, results) in smoke_runs.items():
        unresolved = [r for r in results if not r.resolved or r.stop_reason != "end_turn"]
        assert len(results) >= len(CI_TASKS) and not unresolved, f"{name}:\n{_report(unresolved)}"
        assert not [v for r in results for v in (*r.schema_violations, *r.protocol_violations)]
        assert not [r.task for r in results if r.agent_killed]
    # plan-only's script tries to write in plan mode: it resolves only if the mode held in the container.
    assert "plan-only" in {r.task for r in smoke_runs["editor"][1]}


def test_the_editor_profile_serves_files_and_terminals_in_the_container(
    smoke_runs: dict[str, tuple[Path, list[TrialResult]]],
) -> None:
    editor_dir, editor = smoke_runs["editor"]
    [generate] = [r for r in editor if r.task == "terminal-generate"]
    assert generate.permission_requests >= 1
    calls = methods(trial_dir(editor_dir, "terminal-generate", 1) / "transcript.jsonl", "agent")
    assert {"terminal/create", "terminal/release"} <= set(calls)
    fix = methods(trial_dir(editor_dir, "off-by-one", 1) / "transcript.jsonl", "agent")
    assert {"fs/read_text_file", "fs/write_text_file"} <= set(fix)  # the bind-mounted workspace, same paths


STATUS = "kill -0 $(cat bg.pid) 2>/dev/null && echo alive >bg.status || echo dead >bg.status"


def _where_task(root: Path, marker: str) -> Path:
    """A task whose commands say where they ran, leave a file outside the workspace, and time out a command
    with a background job (which must die with it, in the container)."""
    task = root / "where"
    (task / "workspace").mkdir(parents=True)
    (task / "workspace" / "README.md").write_text("Nothing to see.\n")
    (task / "tests").mkdir()
    (task / "instruction.md").write_text("Say where you run.\n")
    (task / "task.toml").write_text(
        'id = "where"\ndescription = "Where do commands run?"\n\n[verifier]\n'
        "command = 'python \"$EVAL_TESTS_DIR/check.py\"'\n"
    )
    (task / "tests" / "check.py").write_text(
        "import pathlib, sys\n"
        "where = pathlib.Path('where.txt').read_text()\n"
        "assert 'VERSION_CODENAME=trixie' in where, where\n"  # the base image; this machine is Debian 12
        f"assert pathlib.Path('/tmp/{marker}').exists(), 'the verifier runs where the commands ran'\n"
        "assert pathlib.Path('bg.status').read_text().strip() == 'dead', 'a timed-out command left a job running'\n"
    )
    script = golden(
        call("run_command", command=f"cat /etc/os-release > where.txt && touch /tmp/{marker}"),
        call("run_command", command="sleep 600 & echo $! > bg.pid; sleep 600", timeout=2),
        call("run_command", command=STATUS),
        final="I ran three commands.",
    )
    (task / "golden.json").write_text(script.model_dump_json(indent=2))
    return task


def _task_that_fails(root: Path) -> Path:
    """A task the agent does nothing on, whose verifier then says no: a failing verifier in the container fails
    the trial (its exit code comes back through `docker exec`)."""
    task = root / "nothing"
    (task / "workspace").mkdir(parents=True)
    (task / "workspace" / "README.md").write_text("Write done.txt.\n")
    (task / "instruction.md").write_text("Write done.txt.\n")
    (task / "task.toml").write_text(
        'id = "nothing"\ndescription = "A verifier that fails"\n\n[verifier]\ncommand = "test -f done.txt"\n'
    )
    (task / "golden.json").write_text(golden(final="I did nothing.").model_dump_json(indent=2))
    return task


@pytest.mark.parametrize("profile", ["editor", "bare"])
def test_the_models_commands_run_in_the_container_and_a_kill_reaches_them_there(
    tmp_path: Path, profile: Literal["editor", "bare"]
) -> None:
    _docker_or_skip()
    marker = f"evals-escape-{uuid.uuid4().hex}"
    _where_task(tmp_path / "suite", marker)
    if profile == "bare":
        _task_that_fails(tmp_path / "suite")
    config = RunConfig(
        suite=str(tmp_path / "suite"), offline="golden", profile=profile, workers=WORKERS, sandbox="docker"
    )
    results = {r.task: r for r in _run(config, tmp_path / "run")}
    result = results["where"]
    log = trial_dir(tmp_path / "run", "where", 1) / "verifier.log"
    assert result.resolved, f"{_report([result])}\n{log.read_text() if log.is_file() else ''}"
    assert not Path("/tmp", marker).exists(), "a command the model ran wrote to this machine's /tmp"
    assert not [v for r in results.values() for v in (*r.schema_violations, *r.protocol_violations)]
    calls = methods(trial_dir(tmp_path / "run", "where", 1) / "transcript.jsonl", "agent")
    if profile == "editor":
        assert "terminal/kill" in calls  # the editor's terminal was killed through the harness
    else:  # the agent's own tools ran the commands (and killed the group) in the container
        assert not [m for m in calls if m.startswith(("fs/", "terminal/"))]
        failed = results["nothing"]
        assert (failed.resolved, failed.failure_mode, failed.stop_reason) == (False, "verifier_failed", "end_turn")


def test_a_run_records_the_image_it_ran_in(smoke_runs: dict[str, tuple[Path, list[TrialResult]]]) -> None:
    run_dir, _ = smoke_runs["editor"]
    provenance = json.loads((run_dir / "provenance.json").read_text())
    sandbox = provenance["sandbox"]
    assert sandbox["kind"] == "docker" and sandbox["server_version"]
    assert set(sandbox["images"]) == {r.task for r in smoke_runs["editor"][1]}  # by task
    [image] = {json.dumps(image, sort_keys=True): image for image in sandbox["images"].values()}.values()
    assert image["environment"] == BASE_IMAGE and image["tag"].startswith("coder-agent-evals-agent:")
    assert image["wheel"].startswith("coder_agent-") and len(image["wheel_sha256"]) == 64
