"""`python -m evals ...` in process: mistakes on the command line get one clear line and exit 2, and a run that
cannot start leaves no run folder behind.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evals.harness.cli import main
from evals.harness.runner import RUNS_DIR


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and "validation error" not in err, err
    [line] = err.strip().splitlines()
    return line


def test_run_with_an_unknown_suite_names_it_lists_the_known_ones_and_creates_no_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--suite", "nope", "--offline", "golden", "--out", str(tmp_path / "run")]) == 2
    line = _one_error_line(capsys)
    assert "unknown suite 'nope'" in line and "humaneval, smoke" in line
    assert not (tmp_path / "run").exists()


def test_run_with_an_unknown_suite_leaves_nothing_in_the_default_runs_folder(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", "--suite", "no-such-suite-here", "--offline", "null"]) == 2
    assert "unknown suite 'no-such-suite-here'" in _one_error_line(capsys)
    assert not list(RUNS_DIR.glob("*no-such-suite-here*"))


def test_check_tasks_with_an_unknown_suite_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-tasks", "nope"]) == 2
    line = _one_error_line(capsys)
    assert "unknown suite 'nope'" in line and "humaneval, smoke" in line


def test_a_folder_without_tasks_is_not_a_suite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--suite", str(tmp_path), "--offline", "golden", "--out", str(tmp_path / "run")]) == 2
    assert f"unknown suite {str(tmp_path)!r}" in _one_error_line(capsys)
    assert not (tmp_path / "run").exists()


def test_an_unknown_task_is_one_line_and_creates_no_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", "--suite", "smoke", "--tasks", "off-by-one,nope", "--offline", "golden"]
    assert main([*argv, "--out", str(tmp_path / "run")]) == 2
    assert "suite smoke has no task nope" in _one_error_line(capsys)
    assert not (tmp_path / "run").exists()
