"""Trials through the real agent on tiny tasks built here: the wall-clock limit, retries, the permission policy,
and suites that are not folders in evals/suites.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

from coder_agent.scripted.script import Reply, Script
from evals.harness import RunConfig, Task, TrialResult, load_suite, register_suite, run_eval
from evals.harness.results import trial_dir
from evals.harness.scripting import call, golden
from evals.harness.wire import methods, read_transcript

pytestmark = pytest.mark.e2e

TRIAL_TIMEOUT = 120.0
VERIFIER = "grep -qx right answer.txt || { echo 'answer.txt must say: right'; cat answer.txt; exit 1; }"


def make_task(root: Path, script: Script, wall_clock: float = 120.0) -> Path:
    """A task whose workspace holds answer.txt ("wrong"); resolved when it says "right"."""
    folder = root / "answer"
    (folder / "workspace").mkdir(parents=True)
    (folder / "workspace" / "answer.txt").write_text("wrong\n")
    (folder / "instruction.md").write_text("Put the right answer in answer.txt.\n")
    (folder / "task.toml").write_text(
        "\n".join(
            [
                'id = "answer"',
                'description = "answer.txt says right"',
                "[limits]",
                f"wall_clock_seconds = {wall_clock}",
                "[verifier]",
                f"command = '''{VERIFIER}'''",
                "",
            ]
        )
    )
    script.save(folder / "golden.json")
    return folder


def run_one(folder: Path, run_dir: Path, **options: object) -> TrialResult:
    config = RunConfig(suite=str(folder), offline="golden", **options)  # type: ignore[arg-type]

    async def go() -> list[TrialResult]:
        with anyio.fail_after(TRIAL_TIMEOUT):
            return await run_eval(config, run_dir)

    [result] = anyio.run(go)
    return result


def transcript(run_dir: Path) -> Path:
    return trial_dir(run_dir, "answer", 1) / "transcript.jsonl"


def test_a_turn_past_the_wall_clock_limit_is_cancelled_and_answered_cancelled(tmp_path: Path) -> None:
    folder = make_task(tmp_path, Script(replies=[Reply.stall(60, then_text=["too late"])]), wall_clock=3)
    result = run_one(folder, tmp_path / "run")
    assert (result.failure_mode, result.stop_reason) == ("timeout", "cancelled"), result.error
    assert result.attempts[0].limit_hit == "timeout" and result.attempts[0].agent_seconds < 3 + 15
    assert "session/cancel" in methods(transcript(tmp_path / "run"), "client")
    assert not result.schema_violations and not result.protocol_violations


def test_a_retry_sends_the_failing_output_back_in_the_same_session(tmp_path: Path) -> None:
    script = Script(
        replies=[
            Reply.text("Done, I think."),
            *golden(call("write_file", path="answer.txt", content="right\n"), final="Fixed.").replies,
        ]
    )
    result = run_one(make_task(tmp_path, script), tmp_path / "run", retries=1)
    assert result.resolved, result.error
    assert [attempt.passed for attempt in result.attempts] == [False, True]
    sent = methods(transcript(tmp_path / "run"), "client")
    assert sent.count("session/prompt") == 2 and sent.count("session/new") == 1
    prompts = [m for _, m in read_transcript(transcript(tmp_path / "run")) if m and m.get("method") == "session/prompt"]
    retry = prompts[-1]
    assert "answer.txt must say: right" in retry["params"]["prompt"][0]["text"]
    assert (trial_dir(tmp_path / "run", "answer", 1) / "agent_answer.txt").read_text() == "Fixed."


def test_the_reject_policy_refuses_edits(tmp_path: Path) -> None:
    script = golden(call("write_file", path="answer.txt", content="right\n"), final="I could not write it.")
    result = run_one(make_task(tmp_path, script), tmp_path / "run", permission="reject")
    assert not result.resolved and result.failure_mode == "verifier_failed"
    assert result.permission_requests == 1
    answers = [m for who, m in read_transcript(transcript(tmp_path / "run")) if who == "client" and m and "result" in m]
    assert {"outcome": {"outcome": "selected", "optionId": "reject_once"}} in [m["result"] for m in answers]


def test_an_agent_that_refuses_the_session_set_up_is_an_agent_error(tmp_path: Path) -> None:
    folder = make_task(tmp_path, Script(replies=[Reply.text("hi")]))
    (folder / "task.toml").write_text('mode = "no-such-mode"\n' + (folder / "task.toml").read_text())
    result = run_one(folder, tmp_path / "run")
    assert result.failure_mode == "agent_error" and not result.attempts
    assert result.error is not None and "-32602" in result.error


@dataclass(frozen=True)
class GeneratedSuite:
    name: str
    folders: Sequence[Path]

    def tasks(self) -> list[Task]:
        return [Task.from_dir(folder) for folder in self.folders]


def test_suites_can_be_registered_or_given_as_a_folder(tmp_path: Path) -> None:
    folder = make_task(tmp_path, Script(replies=[Reply.text("hi")]))
    register_suite("generated-for-test", lambda: GeneratedSuite("generated-for-test", [folder]))
    assert [task.id for task in load_suite("generated-for-test").tasks()] == ["answer"]
    assert [task.id for task in load_suite(str(tmp_path)).tasks()] == ["answer"]
    assert [task.id for task in load_suite(str(folder)).tasks()] == ["answer"]
    assert len(list(load_suite("smoke").tasks())) == 12
