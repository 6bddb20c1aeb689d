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


def test_run_without_a_model_says_to_give_model_or_offline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--suite", "smoke", "--out", str(tmp_path / "run")]) == 2
    line = _one_error_line(capsys)
    assert "--model MODEL" in line and "--offline golden|null" in line
    assert not (tmp_path / "run").exists()


def test_run_with_both_a_model_and_offline_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--suite", "smoke", "--model", "openai/x", "--offline", "golden"]) == 2
    assert "not both" in _one_error_line(capsys)


BAD_NUMBERS = {
    "--trials 0": (["run", "--suite", "smoke", "--offline", "golden", "--trials", "0"], "--trials"),
    "--workers 0": (["run", "--suite", "smoke", "--offline", "golden", "--workers", "0"], "--workers"),
    "--workers two": (["run", "--suite", "smoke", "--offline", "golden", "--workers", "two"], "--workers"),
    "--retries 9": (["run", "--suite", "smoke", "--offline", "golden", "--retries", "9"], "--retries"),
    "check-tasks --workers -1": (["check-tasks", "--workers", "-1"], "--workers"),
    "export-preds --trial 0": (["export-preds", "RUN", "--out", "p.jsonl", "--trial", "0"], "--trial"),
}


@pytest.mark.parametrize(("argv", "option"), BAD_NUMBERS.values(), ids=BAD_NUMBERS.keys())
def test_a_bad_number_is_a_one_line_usage_error(
    argv: list[str], option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    line = _one_error_line(capsys)
    assert f"argument {option}: must be a whole number" in line


def test_resume_of_a_folder_that_is_no_run_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--resume", str(tmp_path)]) == 2
    assert f"{tmp_path} is not a run folder (it has no run.json)" in _one_error_line(capsys)


def test_a_run_json_with_bad_settings_names_the_file_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "run.json").write_text('{"suite": "smoke", "offline": "golden", "trials": 0}')
    assert main(["summary", str(tmp_path)]) == 2
    line = _one_error_line(capsys)
    assert str(tmp_path / "run.json") in line and "trials: Input should be greater than or equal to 1" in line


def test_a_task_toml_with_a_bad_field_names_the_file_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task = tmp_path / "suite" / "t"
    (task / "workspace").mkdir(parents=True)
    (task / "instruction.md").write_text("Do it.")
    (task / "task.toml").write_text('id = "t"\ndescription = "d"\n[timeouts]\nstart_seconds = -1\n')
    assert main(["check-tasks", str(tmp_path / "suite")]) == 2
    line = _one_error_line(capsys)
    assert str(task / "task.toml") in line
    assert "timeouts.start_seconds: Input should be greater than 0; verifier: Field required" in line


def _sound_task(suite: Path) -> Path:
    task = suite / "t"
    (task / "workspace").mkdir(parents=True)
    (task / "workspace" / "value.txt").write_text("1\n")
    (task / "solution").mkdir()
    (task / "solution" / "solve.sh").write_text("echo 2 > value.txt\n")
    (task / "instruction.md").write_text("Set value.txt to 2.")
    (task / "task.toml").write_text('id = "t"\ndescription = "d"\n[verifier]\ncommand = \'grep -qx 2 value.txt\'\n')
    return task


@pytest.mark.parametrize("form", ["--suite", "positional"])
def test_check_tasks_takes_the_suite_as_run_does_or_positionally(
    form: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _sound_task(tmp_path / "suite")
    suite = ["--suite", str(tmp_path / "suite")] if form == "--suite" else [str(tmp_path / "suite")]
    assert main(["check-tasks", *suite, "--workers", "1"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "1/1 tasks sound"


def test_check_tasks_checks_smoke_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-tasks", "--tasks", "config-edit", "--workers", "1"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("ok   config-edit")


def test_check_tasks_refuses_two_different_suites(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-tasks", "smoke", "--suite", "humaneval"]) == 2
    assert "name the suite once" in _one_error_line(capsys)


def test_run_in_docker_where_no_daemon_answers_says_how_to_set_it_up_and_creates_no_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-daemon.sock")
    out = tmp_path / "run"
    assert main(["run", "--suite", "smoke", "--offline", "golden", "--sandbox", "docker", "--out", str(out)]) == 2
    line = _one_error_line(capsys)
    assert "--sandbox docker: the docker daemon does not answer" in line and "evals/docker/setup.sh" in line
    assert not out.exists()


def test_show_of_a_folder_that_is_no_run_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(tmp_path)]) == 2
    assert "is not a run folder" in _one_error_line(capsys)
