"""The SWE-bench importer, on a synthetic instance: a throwaway git repo with a bug and a test patch.

The imported task is sound (the gold patch resolves it, the untouched checkout does not), the verifier grades
by FAIL_TO_PASS / PASS_TO_PASS and leaves the agent's test files as they were, and a real offline trial's
`export-preds` line is a SWE-bench prediction that applies to the base commit.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anyio
import pytest
from rich.console import Console

from evals.harness import RunConfig, run_eval
from evals.harness.check import check_task, check_tasks
from evals.harness.export import export_preds
from evals.harness.suite import DirectorySuite, load_suite
from evals.harness.task import Task
from evals.harness.verify import TrialPaths, run_verifier
from evals.harness.workspace import prepare_workspace
from evals.suites.swebench import importer
from evals.suites.swebench.run_tests import touched_paths

IID = "acme__calc-1"
CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
TESTS = "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"
NEW_TEST = "\n\ndef test_add():\n    from calc import add\n\n    assert add(2, 3) == 5\n"


def _git(cwd: Path, *args: str) -> str:
    command = ["git", "-c", "user.name=t", "-c", "user.email=t@localhost", *args]
    return subprocess.run(command, cwd=cwd, check=True, capture_output=True, text=True).stdout


def _diff_of(repo: Path, path: str, text: str) -> str:
    """The git diff that changes `path` to `text` (the repo is left as it was)."""
    (repo / path).write_text(text)
    diff = _git(repo, "diff")
    _git(repo, "checkout", "--", path)
    return diff


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("swebench")
    repo = base / "repos" / "acme__calc"
    (repo / "tests").mkdir(parents=True)
    (repo / "calc.py").write_text(CALC)
    (repo / "tests" / "test_calc.py").write_text(TESTS)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    commit = _git(repo, "rev-parse", "HEAD").strip()
    instance = {
        "instance_id": IID,
        "repo": "acme/calc",
        "base_commit": commit,
        "problem_statement": "add(2, 3) returns -1; it should return 5.",
        "patch": _diff_of(repo, "calc.py", CALC.replace("a - b", "a + b")),
        "test_patch": _diff_of(repo, "tests/test_calc.py", TESTS + NEW_TEST),
        "FAIL_TO_PASS": json.dumps(["tests/test_calc.py::test_add"]),  # JSON strings, as in the datasets
        "PASS_TO_PASS": json.dumps(["tests/test_calc.py::test_mul"]),
    }
    _git(repo, "commit", "-q", "--allow-empty", "-m", "later work the task must not see")
    (base / "instances.jsonl").write_text(json.dumps(instance) + "\n")
    out = base / "suite"
    argv = [str(base / "instances.jsonl"), "--repos", str(base / "repos"), "--out", str(out)]
    argv += ["--verifier-seconds", "60"]
    assert importer.main(argv) == 0
    return out


def test_the_import_is_a_task_folder_at_the_base_commit(suite_dir: Path) -> None:
    [task] = load_suite(str(suite_dir)).tasks()
    assert task.id == IID
    assert task.config.verifier.needs == ["pytest"]  # run_tests.py runs it under the harness's python
    assert (task.workspace_dir / "calc.py").read_text() == CALC
    assert not (task.workspace_dir / ".git").exists()
    assert "add(2, 3) returns -1" in task.instruction
    meta = json.loads((suite_dir / IID / "tests" / "instance.json").read_text())
    assert meta["FAIL_TO_PASS"] == ["tests/test_calc.py::test_add"]
    assert touched_paths((suite_dir / IID / "tests" / "test.patch").read_text()) == ["tests/test_calc.py"]


def test_check_tasks_passes_oracle_resolves_and_untouched_fails(suite_dir: Path) -> None:
    # (A DirectorySuite of its own: load_suite() of an absolute path names the suite by the whole path,
    # which check_tasks then puts into a temp folder's prefix.)
    suite = DirectorySuite("swebench-synthetic", suite_dir)
    [check] = anyio.run(check_tasks, suite, list(suite.tasks()))
    assert check.ok, check.problems
    assert (check.untouched_exit, check.oracle_exit) == (1, 0)


def test_a_broken_pass_to_pass_test_fails_and_test_files_are_put_back(suite_dir: Path, tmp_path: Path) -> None:
    [task] = load_suite(str(suite_dir)).tasks()
    paths = TrialPaths(tmp_path / "trial")
    paths.root.mkdir()

    async def verify() -> tuple[int | None, str]:
        await prepare_workspace(task.workspace_dir, paths.workspace)
        calc = paths.workspace / "calc.py"
        calc.write_text(CALC.replace("a - b", "a + b").replace("a * b", "a ** b"))  # fixes add, breaks mul
        (paths.workspace / "tests" / "test_calc.py").write_text("# the agent's own version\n")
        result = await run_verifier(task, paths, paths.root / "verifier.log")
        return result.exit_code, result.output

    code, output = anyio.run(verify)
    assert code == 1, output
    assert "PASS_TO_PASS tests/test_calc.py::test_mul: failed" in output
    assert "FAIL_TO_PASS" not in output.split("required tests pass")[1]
    assert (paths.workspace / "tests" / "test_calc.py").read_text() == "# the agent's own version\n"


def test_a_missing_repo_is_an_error(tmp_path: Path) -> None:
    row = {"instance_id": "x__y-1", "repo": "x/y", "base_commit": "0" * 40}
    (tmp_path / "i.jsonl").write_text(json.dumps(row) + "\n")
    assert importer.main([str(tmp_path / "i.jsonl"), "--repos", str(tmp_path), "--out", str(tmp_path / "o")]) == 2


@pytest.mark.e2e
def test_an_offline_golden_trial_resolves_and_exports_a_swebench_prediction(suite_dir: Path, tmp_path: Path) -> None:
    config = RunConfig(suite=str(suite_dir), offline="golden", profile="bare")
    [result] = anyio.run(lambda: run_eval(config, tmp_path / "run", console=Console(stderr=True)))
    assert result.resolved, result.error
    assert export_preds(tmp_path / "run", tmp_path / "preds.jsonl") == 1
    [line] = (tmp_path / "preds.jsonl").read_text().splitlines()
    pred = json.loads(line)
    assert set(pred) == {"instance_id", "model_name_or_path", "model_patch"}
    assert (pred["instance_id"], pred["model_name_or_path"]) == (IID, "scripted-golden")
    # The patch is relative to the repository root: it applies to a checkout of the base commit.
    meta = json.loads((suite_dir / IID / "tests" / "instance.json").read_text())
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(suite_dir.parent / "repos" / "acme__calc"), str(clone))
    _git(clone, "checkout", "-q", meta["base_commit"])
    (tmp_path / "model.patch").write_text(pred["model_patch"])
    _git(clone, "apply", str(tmp_path / "model.patch"))
    assert "a + b" in (clone / "calc.py").read_text()
    assert _git(clone, "status", "--porcelain").split() == ["M", "calc.py"]


def test_check_task_reports_an_instance_whose_gold_patch_does_not_fix_it(suite_dir: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    subprocess.run(["cp", "-r", str(suite_dir / IID), str(broken)], check=True)
    (broken / "solution" / "solution.patch").write_text("")  # an empty patch: git apply refuses it
    check = anyio.run(check_task, Task.from_dir(broken), tmp_path / "scratch")
    assert not check.ok
