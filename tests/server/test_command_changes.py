"""Every change is seen, whatever made it: files a command edits, creates and deletes show up as diffs, and the
turn ends with a summary of what it changed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import PROTOCOL_VERSION, text_block
from acp.schema import AgentMessageChunk, ToolCallStart

from coder_agent.config.settings import Settings
from coder_agent.scripted.script import Reply, ToolCallStep
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.editor_client import EDITOR_CAPABILITIES, EditorClient
from tests.support.inproc import inproc_agent
from tests.support.recording_client import RecordingClient

pytestmark = pytest.mark.anyio

COMMAND = "sed -i 's/alpha/ALPHA/' a.txt && rm b.txt && printf 'fresh\\n' > c.txt && printf 'x\\n' > build.log"


def sh(cwd: Path, script: str) -> None:
    subprocess.run(["/bin/sh", "-c", script], cwd=cwd, check=True, capture_output=True)


def make_project(workspace: Path, git: bool) -> Path:
    sh(workspace, "printf 'alpha\\nbeta\\n' > a.txt && printf 'bye\\n' > b.txt && printf '*.log\\n' > .gitignore")
    if git:
        sh(workspace, "git init -q && git add -A && git -c user.email=t@t -c user.name=t commit -qm init")
    return workspace


def agent_text_of(updates: list[Any]) -> str:
    """The agent's text as the clients that join every message chunk show it (Toad, acpx, acp-client)."""
    return "".join(u.content.text for u in updates if isinstance(u, AgentMessageChunk))


async def run_command_turn(settings: Settings, client: RecordingClient, capabilities: Any, cwd: Path) -> list[Any]:
    async with inproc_agent(settings, client) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities)
        session = await agent.conn.new_session(cwd=str(cwd), mcp_servers=[])
        await agent.conn.prompt(session_id=session.session_id, prompt=[text_block("tidy up")])
        return client.updates(session.session_id)


@pytest.mark.parametrize("profile", ["bare", "editor"])
async def test_a_commands_edits_creations_and_deletions_each_show_up_as_a_diff(
    make_settings: Any, srv: ScriptedModelServer, workspace: Path, profile: str
) -> None:
    project = make_project(workspace, git=True)
    call = ToolCallStep(name="run_command", id="c1", arguments=json.dumps({"command": COMMAND}))
    srv.enqueue(Reply.tool_calls([call]), Reply.text("done"))
    settings: Settings = make_settings(default_mode="bypass")
    async with anyio.create_task_group() as tg:
        client: RecordingClient = EditorClient(tg) if profile == "editor" else RecordingClient()
        capabilities = EDITOR_CAPABILITIES if profile == "editor" else None
        updates = await run_command_turn(settings, client, capabilities, project)
        tg.cancel_scope.cancel()
    reports = [u for u in updates if isinstance(u, ToolCallStart) and u.kind == "edit"]
    assert len(reports) == 1 and reports[0].status == "completed"
    assert reports[0].title == "Changed by run command: a.txt, b.txt, c.txt"
    shown = reports[0].content or []
    assert [block.type for block in shown] == ["diff", "diff", "diff"], shown
    diffs = {Path(block.path).name: (block.old_text, block.new_text) for block in shown}
    assert diffs == {
        "a.txt": ("alpha\nbeta\n", "ALPHA\nbeta\n"),
        "b.txt": ("bye\n", ""),
        "c.txt": (None, "fresh\n"),
    }
    answer = next(m for m in srv.requests[-1].body["messages"] if m["role"] == "tool")["content"]
    assert answer.endswith("Files changed by this call: a.txt (modified), b.txt (deleted), c.txt (created).")
    # the summary is the agent's own note, marked so clients can tell it from the model's answer
    notes = [u.content.text for u in updates if isinstance(u, AgentMessageChunk) and u.field_meta]
    # a paragraph of its own (clients join the chunks: never glued to the model's last word), a Markdown list
    assert notes == ["\n\n**Changed 3 files**\n- `a.txt` +1 -1\n- `b.txt` +0 -1 (deleted)\n- `c.txt` +1 -0 (created)"]
    assert agent_text_of(updates).startswith("done\n\n**Changed 3 files**\n")
    [note] = [u for u in updates if isinstance(u, AgentMessageChunk) and u.field_meta]
    assert note.field_meta == {
        "coder-agent": {
            "note": "changed-files",
            "files": [
                {"path": "a.txt", "kind": "modified", "added": 1, "removed": 1},
                {"path": "b.txt", "kind": "deleted", "added": 0, "removed": 1},
                {"path": "c.txt", "kind": "created", "added": 1, "removed": 0},
            ],
        }
    }


@pytest.mark.parametrize("git", ["no commit yet", "no repository"])
async def test_outside_a_commit_every_change_shows_its_diff_and_what_existed_is_never_called_created(
    make_settings: Any, srv: ScriptedModelServer, workspace: Path, git: str
) -> None:
    """A repository with no commit, or a folder that is none: what each file held before is known all the same
    (the snapshot taken before the command), so edits and deletions show their diffs too."""
    project = make_project(workspace, git=False)
    if git == "no commit yet":
        sh(project, "git init -q")
    call = ToolCallStep(name="run_command", id="c1", arguments=json.dumps({"command": COMMAND}))
    srv.enqueue(Reply.tool_calls([call]), Reply.text("done"))
    updates = await run_command_turn(make_settings(default_mode="bypass"), RecordingClient(), None, project)
    [report] = [u for u in updates if isinstance(u, ToolCallStart) and u.kind == "edit"]
    shown = report.content or []
    diffs = {Path(block.path).name: (block.old_text, block.new_text) for block in shown if block.type == "diff"}
    assert diffs == {"a.txt": ("alpha\nbeta\n", "ALPHA\nbeta\n"), "b.txt": ("bye\n", ""), "c.txt": (None, "fresh\n")}
    notes = [u.content.text for u in updates if isinstance(u, AgentMessageChunk) and u.field_meta]
    assert notes == ["\n\n**Changed 3 files**\n- `a.txt` +1 -1\n- `b.txt` +0 -1 (deleted)\n- `c.txt` +1 -0 (created)"]
