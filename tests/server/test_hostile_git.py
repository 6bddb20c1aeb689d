"""A hostile repository through the whole agent: the issue's run (accept-edits, a `.git/config` that includes a
file of the project, the model edits that file, a command runs, the agent's own `git status` follows), writes in
a git folder, and a `required` filter. The repositories are `tests/fixtures/hostile_git/`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from acp.schema import AgentMessageChunk, ToolCallStart

from coder_agent.config.settings import Settings
from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.hostile_git import CHANGED, COMMAND, lay_out
from tests.support.server_helpers import session

pytestmark = pytest.mark.anyio


def system_prompt(srv: ScriptedModelServer) -> str:
    return str(srv.requests[0].body["messages"][0]["content"])


async def test_a_filter_the_models_allowed_edit_names_never_runs_when_the_agent_looks_at_git(
    srv: ScriptedModelServer, settings: Settings, tmp_path: Path
) -> None:
    repo = lay_out("include-in-project", tmp_path)
    edit = tool_call("write_file", {"path": repo.case.edit["path"], "content": repo.fill(repo.case.edit["text"])})
    command = tool_call("run_command", {"command": COMMAND})
    srv.enqueue(Reply.tool_calls([edit]), Reply.tool_calls([command]), Reply.text("done"))
    async with session("bare", settings, repo.project, mode="accept-edits") as run:
        assert await run.prompt("set up the filter, then tidy a.txt") == "end_turn"
        calls = run.tool_calls()
        updates = run.client.updates(run.session_id)
    assert [request.tool_call.title for request in run.client.permission_requests] == [COMMAND]  # the edit: allowed
    assert (repo.project / "a.txt").read_text() == CHANGED
    assert {call["statuses"][-1] for call in calls.values()} == {"completed"}
    [report] = [u for u in updates if isinstance(u, ToolCallStart) and u.title.startswith("Changed by")]
    assert report.title == "Changed by run command: a.txt"  # the agent's git status did look, and saw the change
    assert "clean working tree" in system_prompt(srv)
    assert repo.left() == []  # before: ["include"], the filter the edit named ran in the agent's git status


WRITES = {
    "write_file": ("write_file", {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch pwned\n"}),
    "edit_file": (
        "edit_file",
        {"path": ".git/config", "old_string": "[core]", "new_string": "[core]\n\tfsmonitor = touch pwned"},
    ),
    "apply_patch": (
        "apply_patch",
        {"patch": "--- /dev/null\n+++ b/.git/hooks/post-checkout\n@@ -0,0 +1 @@\n+touch pwned\n"},
    ),
    "through a link": ("write_file", {"path": "tools/pre-push", "content": "#!/bin/sh\ntouch pwned\n"}),
}


@pytest.mark.parametrize("how", list(WRITES))
async def test_a_write_in_the_git_folder_asks_in_accept_edits_and_its_title_says_why(
    srv: ScriptedModelServer, settings: Settings, tmp_path: Path, how: str
) -> None:
    """Before: accept-edits wrote `.git/hooks/pre-commit` without a prompt."""
    repo = lay_out("required-filter", tmp_path)
    os.symlink(".git/hooks", repo.project / "tools")
    name, arguments = WRITES[how]
    inside = tool_call("write_file", {"path": "notes.txt", "content": "x\n"})  # allowed without a word
    srv.enqueue(Reply.tool_calls([inside]), Reply.tool_calls([tool_call(name, arguments)]), Reply.text("ok"))
    config_before = (repo.project / ".git" / "config").read_text()

    async with session("bare", settings, repo.project, mode="accept-edits", permission="reject_once") as run:
        assert await run.prompt("go") == "end_turn"
    [asked] = run.client.permission_requests
    assert "(writes in a git folder, whose hooks and config git runs: " in (asked.tool_call.title or "")
    hooks = sorted(path.name for path in (repo.project / ".git" / "hooks").iterdir())
    assert not [hook for hook in hooks if not hook.endswith(".sample")]
    assert (repo.project / ".git" / "config").read_text() == config_before
    assert (repo.project / "notes.txt").exists()


async def test_a_required_filter_the_prompt_says_git_could_not_look_and_every_change_is_still_seen(
    srv: ScriptedModelServer, make_settings: Any, tmp_path: Path
) -> None:
    """Before: the prompt said "clean working tree" and change tracking fell back to a walk without a word; then
    the walk was said. The snapshots never run the checkout's git: what the command changed is seen exactly."""
    repo = lay_out("required-filter", tmp_path)
    repo.change_tracked()
    command = tool_call("run_command", {"command": "printf 'new\\n' > b.txt"})
    srv.enqueue(Reply.tool_calls([command]), Reply.text("done"))
    async with session("bare", make_settings(default_mode="bypass"), repo.project) as run:
        assert await run.prompt("make b") == "end_turn"
        updates = run.client.updates(run.session_id)
    why = "a.txt: clean filter 'req' failed"
    assert f"Git: branch main, the working tree could not be looked at (git status failed: {why})" in system_prompt(srv)
    [note] = [u.content.text for u in updates if isinstance(u, AgentMessageChunk) and u.field_meta]
    assert note == "\n\n**Changed 1 file**\n- `b.txt` +1 -0 (created)"
    assert repo.left() == []
