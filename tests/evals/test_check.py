"""`check-tasks` catches unsound tasks: a verifier the untouched workspace passes, a failing oracle, bad scripts."""

from __future__ import annotations

from pathlib import Path

import anyio

from coder_agent.scripted.script import Reply, Script, tool_call
from evals.harness.check import check_task
from evals.harness.task import Task


def _task(root: Path, verifier: str, solve: str, golden: Script) -> Task:
    (root / "workspace").mkdir(parents=True)
    (root / "workspace" / "value.txt").write_text("1\n")
    (root / "solution").mkdir()
    (root / "solution" / "solve.sh").write_text(solve)
    (root / "instruction.md").write_text("Set value.txt to 2.")
    (root / "task.toml").write_text(f"id = \"t\"\ndescription = \"d\"\n[verifier]\ncommand = '''{verifier}'''\n")
    golden.save(root / "golden.json")
    return Task.from_dir(root)


def test_a_sound_task_passes(tmp_path: Path) -> None:
    golden = Script(replies=[Reply.tool_calls([tool_call("write_file", {"path": "value.txt", "content": "2\n"})])])
    task = _task(tmp_path / "task", "grep -qx 2 value.txt", "echo 2 > value.txt\n", golden)
    check = anyio.run(check_task, task, tmp_path / "scratch")
    assert check.ok, check.problems
    assert (check.untouched_exit, check.oracle_exit) == (1, 0)


def test_unsound_tasks_are_reported(tmp_path: Path) -> None:
    bad_calls = [tool_call("write_file", {"path": "value.txt"}), tool_call("delete_everything", {})]
    task = _task(tmp_path / "task", "true", "exit 3\n", Script(replies=[Reply.tool_calls(bad_calls)]))
    check = anyio.run(check_task, task, tmp_path / "scratch")
    problems = "\n".join(check.problems)
    assert "the untouched workspace passes the verifier" in problems
    assert "solve.sh failed (exit 3)" in problems
    assert "bad arguments for write_file" in problems
    assert "'delete_everything', which is not a tool" in problems
