"""The evals CI gate: the smoke suite, offline, through the real agent over ACP, with both client profiles.

golden scripts resolve every task, null scripts resolve none, and no line the agent writes breaks the ACP
v1 schema (or the protocol: capabilities it was not offered, terminals it did not release). The three runs
share two worker slots, so both cores stay busy to the end.

golden runs in both profiles, since the tools take other paths in each (the editor's fs and terminals, or
the agent's own). null runs in one: its scripts call no tool, so the profiles differ only in what
`initialize` offers, which the golden runs cover; a second null run would prove nothing more.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import pytest
from rich.console import Console

from evals.harness import RunConfig, TrialResult, run_eval
from evals.harness.check import check_tasks, render_checks
from evals.harness.client import Profile
from evals.harness.config import REPO_ROOT, Offline
from evals.harness.results import trial_dir
from evals.harness.suite import load_suite
from evals.harness.wire import methods

pytestmark = pytest.mark.e2e

RUNS: list[tuple[Profile, Offline]] = [("editor", "golden"), ("bare", "golden"), ("bare", "null")]
WORKERS = 2
GATE_TIMEOUT = 900.0  # a loaded machine is slow; the gate takes ~3 minutes on an idle 2-core one


Key = tuple[str, str]  # (profile, offline)


@dataclass
class Runs:
    root: Path
    results: dict[Key, list[TrialResult]] = field(default_factory=dict)

    def __getitem__(self, key: Key) -> list[TrialResult]:
        return self.results[key]

    def run_dir(self, profile: str, offline: str) -> Path:
        return self.root / f"{offline}-{profile}"

    def trial_dir(self, profile: str, offline: str, task: str) -> Path:
        [result] = [r for r in self.results[(profile, offline)] if r.task == task]
        return trial_dir(self.run_dir(profile, offline), task, result.trial)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    gate = Runs(tmp_path_factory.mktemp("gate"))

    async def all_runs() -> None:
        limiter = anyio.CapacityLimiter(WORKERS)
        console = Console(stderr=True, force_terminal=False)
        with anyio.fail_after(GATE_TIMEOUT):
            async with anyio.create_task_group() as tg:
                for profile, offline in RUNS:
                    config = RunConfig(suite="smoke", offline=offline, profile=profile, workers=WORKERS)

                    async def one(config: RunConfig = config, key: Key = (profile, offline)) -> None:
                        run_dir = gate.run_dir(*key)
                        results = await run_eval(config, run_dir, console=console, limiter=limiter)
                        for result in results:
                            result.error = _explain(result, trial_dir(run_dir, result.task, result.trial))
                        gate.results[key] = results

                    tg.start_soon(one)

    anyio.run(all_runs)
    return gate


def _explain(result: TrialResult, folder: Path) -> str | None:
    """The trial's error plus the end of its verifier log: what a failing assertion should show."""
    log = folder / "verifier.log"
    tail = log.read_text(encoding="utf-8", errors="replace")[-1500:] if log.is_file() else ""
    return "\n".join(part for part in (result.error, tail) if part) or None


def _report(results: list[TrialResult]) -> str:
    return "\n".join(f"- {r.task}: {r.failure_mode} stop={r.stop_reason}\n{r.error or ''}" for r in results)


@pytest.mark.parametrize("profile", ["editor", "bare"])
def test_golden_scripts_resolve_every_smoke_task(runs: Runs, profile: str) -> None:
    results = runs[(profile, "golden")]
    assert len(results) == len(list(load_suite("smoke").tasks())) >= 12
    unresolved = [r for r in results if not r.resolved]
    assert not unresolved, _report(unresolved)
    assert all(r.stop_reason == "end_turn" and r.tool_calls > 0 for r in results)


def test_null_scripts_resolve_no_smoke_task(runs: Runs) -> None:
    results = runs[("bare", "null")]
    assert len(results) == len(list(load_suite("smoke").tasks()))
    resolved = [r for r in results if r.resolved]
    assert not resolved, _report(resolved)
    assert all(r.failure_mode == "verifier_failed" and r.stop_reason == "end_turn" for r in results), _report(results)


def test_no_agent_line_breaks_the_acp_schema_or_the_protocol(runs: Runs) -> None:
    problems = [
        f"{profile}/{offline} {r.task}: {violation}"
        for (profile, offline), results in runs.results.items()
        for r in results
        for violation in [*r.schema_violations, *r.protocol_violations]
    ]
    assert not problems, "\n".join(problems)
    assert not [r.task for results in runs.results.values() for r in results if r.agent_killed]


def test_the_editor_profile_serves_files_and_terminals_and_the_bare_one_does_not(runs: Runs) -> None:
    editor = {r.task: r for r in runs[("editor", "golden")]}
    assert editor["terminal-generate"].permission_requests >= 1  # run_command asks in default mode

    def agent_calls(profile: str, task: str) -> list[str]:
        return methods(runs.trial_dir(profile, "golden", task) / "transcript.jsonl", "agent")

    assert {"terminal/create", "terminal/release"} <= set(agent_calls("editor", "terminal-generate"))
    assert {"fs/read_text_file", "fs/write_text_file"} <= set(agent_calls("editor", "new-module"))
    for task in ("terminal-generate", "new-module"):
        assert not [m for m in agent_calls("bare", task) if m.startswith(("fs/", "terminal/"))]


def test_check_tasks_passes_for_smoke() -> None:
    suite = load_suite("smoke")
    checks = anyio.run(check_tasks, suite, list(suite.tasks()), WORKERS)
    assert all(check.ok for check in checks), render_checks(checks)


def test_the_smoke_scripts_are_built_from_their_source() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "evals.suites.smoke.build_scripts", "--check"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
