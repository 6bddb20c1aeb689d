"""Every tool through the agent, with an editor that serves fs and terminal and with a bare client."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from coder_agent.config.settings import Settings
from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.driving import BackgroundPrompt, model_saw
from tests.support.editor_client import EditorClient
from tests.support.server_helpers import PROFILES, Profile, session

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("profile", PROFILES)
async def test_write_then_edit_shows_diffs_asks_first_and_lands_on_disk(
    profile: Profile, srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    srv.enqueue(
        Reply.tool_calls([tool_call("write_file", {"path": "app.py", "content": "x = 1\n"}, id="w")]),
        Reply.tool_calls([tool_call("edit_file", {"path": "app.py", "old_string": "1", "new_string": "2"}, id="e")]),
        Reply.text("Done."),
    )
    async with session(profile, settings, workspace) as run:
        assert await run.prompt("make app.py") == "end_turn"
        write, edit = run.tool_calls().values()
    assert (workspace / "app.py").read_text() == "x = 2\n"
    assert write["kind"] == "edit" and write["statuses"] == ["pending", "in_progress", "completed"]
    [diff] = [c for c in write["content"] if c["type"] == "diff"]
    assert diff == {"type": "diff", "path": str(workspace / "app.py"), "oldText": None, "newText": "x = 1\n"}
    assert edit["locations"][0]["path"] == str(workspace / "app.py")
    assert [r.tool_call.tool_call_id for r in run.client.permission_requests] == [
        write["toolCallId"],
        edit["toolCallId"],
    ]
    # what people choose, named as the user sees it: file edits, whichever tool makes them
    options = run.client.permission_requests[0].options
    assert [(o.kind, o.name) for o in options] == [
        ("allow_once", "Allow"),
        ("allow_always", "Always allow file edits in this session"),
        ("reject_once", "Reject"),
    ]
    if isinstance(run.client, EditorClient):
        assert run.client.methods().count("fs/write_text_file") == 2  # the editor saw both writes


async def test_read_file_sees_the_editors_unsaved_buffer(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("on disk\n")
    srv.enqueue(Reply.tool_calls([tool_call("read_file", {"path": "notes.txt"})]), Reply.text("ok"))
    async with session("editor", settings, workspace) as run:
        assert isinstance(run.client, EditorClient)
        run.client.buffers[str(workspace / "notes.txt")] = "unsaved edit\n"
        assert await run.prompt("read notes") == "end_turn"
        [read] = run.tool_calls().values()
    assert read["kind"] == "read" and read["statuses"][-1] == "completed"
    assert not run.client.permission_requests  # reads never ask
    assert "unsaved edit" in model_saw(srv.requests[1].body)


async def test_a_command_runs_in_the_editors_terminal_which_is_always_released(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    srv.enqueue(
        Reply.tool_calls([tool_call("run_command", {"command": "echo hello from $0; exit 3"})]), Reply.text("ok")
    )
    async with session("editor", settings, workspace, mode="bypass") as run:
        assert await run.prompt("run it") == "end_turn"
        [call] = run.tool_calls().values()
        assert isinstance(run.client, EditorClient)
        methods = run.client.methods()
    assert call["kind"] == "execute" and call["title"].startswith("echo hello")
    assert call["rawInput"] == {"command": "echo hello from $0; exit 3"}
    assert methods[0] == "terminal/create" and methods[-1] == "terminal/release"
    assert "terminal/wait_for_exit" in methods and "terminal/output" in methods
    assert any(c["type"] == "terminal" for c in call["content"])
    told = model_saw(srv.requests[1].body)
    assert "hello from" in told and "3" in told


async def test_read_only_tools_and_the_plan(srv: ScriptedModelServer, settings: Settings, workspace: Path) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "a.py").write_text("def target():\n    return 1\n")
    (workspace / ".gitignore").write_text("ignored/\n")
    (workspace / "ignored").mkdir()
    (workspace / "ignored" / "b.py").write_text("def target(): pass\n")
    entries = [
        {"content": "look around", "status": "in_progress", "priority": "high"},
        {"content": "report", "status": "pending", "priority": "low"},
    ]
    srv.enqueue(
        Reply.tool_calls(
            [
                tool_call("grep", {"pattern": "def target"}),
                tool_call("glob", {"pattern": "**/*.py"}),
                tool_call("list_dir", {}),
                tool_call("todo_write", {"entries": entries}),
            ]
        ),
        Reply.text("ok"),
    )
    async with session("bare", settings, workspace) as run:
        assert await run.prompt("look") == "end_turn"
        calls = list(run.tool_calls().values())
        plans = run.plans()
    assert [c["kind"] for c in calls] == ["search", "search", "read", "think"]
    assert all(c["statuses"][-1] == "completed" for c in calls)
    assert not run.client.permission_requests
    assert plans[-1]["entries"] == entries
    told = model_saw(srv.requests[1].body)
    assert "src/a.py" in told and "ignored/b.py" not in told


@pytest.mark.parametrize("profile", PROFILES)
async def test_a_patch_that_does_not_apply_fails_exactly_and_writes_nothing(
    profile: Profile, srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    (workspace / "m.py").write_text("a = 1\nb = 2\n")
    patch = "--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n a = 1\n-b = 3\n+b = 4\n"
    srv.enqueue(Reply.tool_calls([tool_call("apply_patch", {"patch": patch})]), Reply.text("sorry"))
    async with session(profile, settings, workspace, mode="accept-edits") as run:
        assert await run.prompt("patch") == "end_turn"
        [call] = run.tool_calls().values()
    assert call["statuses"][-1] == "failed"
    assert (workspace / "m.py").read_text() == "a = 1\nb = 2\n"
    told = model_saw(srv.requests[1].body)
    assert "m.py" in told and "b = 3" in told


async def test_the_model_gets_a_clear_error_for_bad_arguments_and_unknown_tools(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    srv.enqueue(
        Reply.tool_calls(
            [
                tool_call("read_file", {"nope": 1}),
                tool_call("teleport", {}),
                tool_call("edit_file", json.dumps({"path": "x"})[:-3]),
            ]
        ),
        Reply.text("ok"),
    )
    async with session("bare", settings, workspace) as run:
        assert await run.prompt("go") == "end_turn"
        calls = list(run.tool_calls().values())
    assert [c["statuses"][-1] for c in calls] == ["failed", "failed", "failed"]
    told = model_saw(srv.requests[1].body)
    assert "Invalid arguments for read_file" in told and "Unknown tool 'teleport'" in told


async def test_a_prompt_sent_right_after_a_cancel_waits_for_the_cancelled_turn_instead_of_failing(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    srv.enqueue(Reply.tool_calls([tool_call("run_command", {"command": "sleep 30"})]), Reply.text("second answer"))
    async with session("bare", settings, workspace, mode="bypass") as run:
        first = BackgroundPrompt(run.agent, run.session_id, "run something long")
        async with anyio.create_task_group() as tg:
            tg.start_soon(first.run)
            await run.client.wait_for(
                lambda: any(c["statuses"][-1:] == ["in_progress"] for c in run.tool_calls().values()), timeout=60
            )
            await run.agent.conn.cancel(session_id=run.session_id)
            second = await run.prompt("and now?")  # sent before the first prompt's reply arrived
        assert (await first.result(10)).stop_reason == "cancelled"
    assert second == "end_turn"
    [call] = run.tool_calls().values()
    assert call["statuses"][-1] == "failed"
