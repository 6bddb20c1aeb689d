"""Modes and permissions of `coder-agent run`: what runs unasked, what is refused.

(Asking on a terminal: tests/headless/test_run_process.py.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_agent.cli.sessions import main as sessions_main
from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.run_helpers import RunInProcess, tool_answer


def test_accept_edits_is_the_default_and_an_edit_lands_on_disk_with_its_diff_shown(
    srv: ScriptedModelServer, run_cli_here: RunInProcess, workspace: Path
) -> None:
    (workspace / "greet.py").write_text("print('hello')\n", encoding="utf-8")
    edit = tool_call("edit_file", {"path": "greet.py", "old_string": "hello", "new_string": "goodbye"})
    srv.enqueue(Reply.tool_calls([edit]), Reply.text("Edited."))
    ran = run_cli_here(["--prompt", "say goodbye"])
    assert ran.code == 0, ran
    assert (workspace / "greet.py").read_text(encoding="utf-8") == "print('goodbye')\n"
    assert "-print('hello')" in ran.stdout
    assert "+print('goodbye')" in ran.stdout
    assert "updated greet.py" in tool_answer(srv)


def test_yes_runs_commands_unasked(srv: ScriptedModelServer, run_cli_here: RunInProcess, workspace: Path) -> None:
    command = tool_call("run_command", {"command": "echo made > made.txt && echo visible-output"})
    srv.enqueue(Reply.tool_calls([command]), Reply.text("Ran it."))
    ran = run_cli_here(["--yes", "--prompt", "run it"])
    assert ran.code == 0, ran
    assert (workspace / "made.txt").read_text(encoding="utf-8") == "made\n"
    assert "visible-output" in ran.stdout
    assert tool_answer(srv).startswith("Exit code 0.")


def test_without_a_terminal_a_call_that_asks_is_rejected_and_the_output_says_so(
    srv: ScriptedModelServer, run_cli_here: RunInProcess, workspace: Path
) -> None:
    command = tool_call("run_command", {"command": "touch ran.txt"})
    srv.enqueue(Reply.tool_calls([command]), Reply.text("Could not."))
    ran = run_cli_here(["--json", "--prompt", "run it"])
    assert ran.code == 0, ran
    assert not (workspace / "ran.txt").exists()
    [permission] = [line for line in ran.lines() if line["type"] == "permission"]
    assert permission["optionId"] == "reject_once"
    assert "rejected" in permission["note"]
    assert tool_answer(srv).startswith("Refused")


def test_read_only_refuses_an_edit_tells_the_model_and_leaves_the_file(
    srv: ScriptedModelServer, run_cli_here: RunInProcess, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("keep me\n", encoding="utf-8")
    edit = tool_call("write_file", {"path": "notes.txt", "content": "gone\n"})
    srv.enqueue(Reply.tool_calls([edit]), Reply.text("I would change notes.txt."))
    ran = run_cli_here(["--read-only", "--prompt", "rewrite notes"])
    assert ran.code == 0, ran
    assert (workspace / "notes.txt").read_text(encoding="utf-8") == "keep me\n"
    assert tool_answer(srv).startswith("Refused: Plan mode is read-only")
    assert "✗" in ran.stdout


def test_a_run_ends_with_the_files_it_changed_and_sessions_undo_puts_them_back(
    srv: ScriptedModelServer,
    run_cli_here: RunInProcess,
    workspace: Path,
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (workspace / "notes.txt").write_text("old\n", encoding="utf-8")
    edit = tool_call("write_file", {"path": "notes.txt", "content": "new\nmore\n"})
    command = tool_call("run_command", {"command": "printf 'made\\n' > made.txt"})
    srv.enqueue(Reply.tool_calls([edit]), Reply.tool_calls([command]), Reply.text("Did it."))
    ran = run_cli_here(["--yes", "--json", "--prompt", "change things"])
    assert ran.code == 0, ran
    texts = [u["content"]["text"] for u in ran.updates("agent_message_chunk")]
    assert texts[-1] == "\n\n**Changed 2 files**\n- `notes.txt` +2 -1\n- `made.txt` +1 -0 (created)"
    session_id = ran.result()["sessionId"]
    assert ran.result()["text"] == "Did it."  # the model's reply, not the agent's note
    assert ran.result()["filesChanged"] == [
        {"path": "notes.txt", "kind": "modified", "added": 2, "removed": 1},
        {"path": "made.txt", "kind": "created", "added": 1, "removed": 0},
    ]

    monkeypatch.setenv("CODER_AGENT_HOME", str(home))
    assert sessions_main(["undo", session_id]) == 0
    assert (workspace / "notes.txt").read_text(encoding="utf-8") == "old\n"
    assert not (workspace / "made.txt").exists()


def test_the_users_default_mode_is_honoured_when_no_flag_names_one(
    srv: ScriptedModelServer, run_cli_here: RunInProcess, workspace: Path
) -> None:
    """Before: a run was accept-edits whatever CODER_AGENT_DEFAULT_MODE said (here: plan, read-only)."""
    edit = tool_call("write_file", {"path": "notes.txt", "content": "changed\n"})
    srv.enqueue(Reply.tool_calls([edit]), Reply.text("Planned."), Reply.text("Written."))
    planned = run_cli_here(["--json", "change notes"], CODER_AGENT_DEFAULT_MODE="plan")
    assert planned.code == 0, planned
    assert planned.lines()[0]["mode"] == "plan"
    assert not (workspace / "notes.txt").exists()
    assert tool_answer(srv).startswith("Refused: Plan mode is read-only")
    flagged = run_cli_here(["--json", "--mode", "accept-edits", "hello"], CODER_AGENT_DEFAULT_MODE="plan")
    assert flagged.lines()[0]["mode"] == "accept-edits"  # a flag wins
