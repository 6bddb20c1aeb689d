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


@pytest.fixture(scope="module")
def smoke_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, list[TrialResult]]]:
    _docker_or_skip()
    root = tmp_path_factory.mktemp("containers")
    plans = {
        "editor-golden": RunConfig(
            suite="smoke",
            tasks=["off-by-one", "terminal-generate", "new-module", "plan-only", "question-no-edit"],
            offline="golden",
            workers=WORKERS,
            sandbox="docker",
        ),
        "bare-golden": RunConfig(
            suite="smoke", tasks=["terminal-generate", "crlf-edit"], offline="golden", profile="bare", sandbox="docker"
        ),
        "bare-null": RunConfig(suite="smoke", tasks=["off-by-one"], offline="null", profile="bare", sandbox="docker"),
    }
    return {name: (root / name, _run(config, root / name)) for name, config in plans.items()}


def test_smoke_tasks_resolve_in_containers_in_both_profiles_with_modes_and_a_clean_wire(
    smoke_runs: dict[str, tuple[Path, list[TrialResult]]],
) -> None:
    for name in ("editor-golden", "bare-golden"):
        _, results = smoke_runs[name]
        unresolved = [r for r in results if not r.resolved or r.stop_reason != "end_turn"]
        assert results and not unresolved, f"{name}:\n{_report(unresolved)}"
    _, nulls = smoke_runs["bare-null"]
    assert [(r.resolved, r.failure_mode) for r in nulls] == [(False, "verifier_failed")], _report(nulls)
    for _, results in smoke_runs.values():
        assert not [v for r in results for v in (*r.schema_violations, *r.protocol_violations)]
        assert not [r.task for r in results if r.agent_killed]


def test_the_editor_profile_serves_terminals_in_the_container_and_bare_uses_the_agents_own(
    smoke_runs: dict[str, tuple[Path, list[TrialResult]]],
) -> None:
    editor_dir, editor = smoke_runs["editor-golden"]
    [generate] = [r for r in editor if r.task == "terminal-generate"]
    assert generate.permission_requests >= 1
    calls = methods(trial_dir(editor_dir, "terminal-generate", 1) / "transcript.jsonl", "agent")
    assert {"terminal/create", "terminal/release"} <= set(calls)
    bare_dir, _ = smoke_runs["bare-golden"]
    bare_calls = methods(trial_dir(bare_dir, "terminal-generate", 1) / "transcript.jsonl", "agent")
    assert not [m for m in bare_calls if m.startswith(("fs/", "terminal/"))]


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


@pytest.mark.parametrize("profile", ["editor", "bare"])
def test_the_models_commands_run_in_the_container_and_a_kill_reaches_them_there(tmp_path: Path, profile: str) -> None:
    _docker_or_skip()
    marker = f"evals-escape-{uuid.uuid4().hex}"
    task = _where_task(tmp_path, marker)
    config = RunConfig(suite=str(task), offline="golden", profile=profile, sandbox="docker")  # type: ignore[arg-type]
    [result] = _run(config, tmp_path / "run")
    log = trial_dir(tmp_path / "run", "where", 1) / "verifier.log"
    assert result.resolved, f"{_report([result])}\n{log.read_text() if log.is_file() else ''}"
    assert not Path("/tmp", marker).exists(), "a command the model ran wrote to this machine's /tmp"
    assert not result.schema_violations and not result.protocol_violations
    transcript = trial_dir(tmp_path / "run", "where", 1) / "transcript.jsonl"
    kills = [m for m in methods(transcript, "agent") if m == "terminal/kill"]
    assert (profile == "editor") == bool(kills)  # the editor's terminal was killed through the harness


def test_a_run_records_the_image_it_ran_in(smoke_runs: dict[str, tuple[Path, list[TrialResult]]]) -> None:
    run_dir, _ = smoke_runs["bare-null"]
    provenance = json.loads((run_dir / "provenance.json").read_text())
    sandbox = provenance["sandbox"]
    assert sandbox["kind"] == "docker" and sandbox["server_version"]
    [image] = sandbox["images"].values()
    assert image["environment"] == BASE_IMAGE and image["tag"].startswith("coder-agent-evals-agent:")
    assert image["wheel"].startswith("coder_agent-") and len(image["wheel_sha256"]) == 64
