"""Undo that never loses work, through the editor profile (it serves files and terminals) and the bare one (the
agent uses the disk): every file a command changed is put back, in a repository or not, with its mode; a file the
user changed since (between turns, or while the model was thinking) is left and named; nothing is written through
a link or outside the session's folders; `sessions undo` keeps off a session live in an agent."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import PROTOCOL_VERSION, RequestError
from acp.schema import AgentMessageChunk, ToolCallStart

from coder_agent.cli.sessions import main as sessions_main
from coder_agent.config.settings import Settings
from coder_agent.scripted.records import RecordedRequest
from coder_agent.scripted.script import Reply, ToolCallStep
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.inproc import inproc_agent
from tests.support.server_helpers import PROFILES, Profile, Run, session

pytestmark = pytest.mark.anyio


def sh(cwd: Path, script: str) -> None:
    subprocess.run(["/bin/sh", "-c", script], cwd=cwd, check=True, capture_output=True)


def command(text: str, call_id: str = "c1") -> Reply:
    return Reply.tool_calls([ToolCallStep(name="run_command", id=call_id, arguments=json.dumps({"command": text}))])


def said(run: Run) -> str:
    """The agent's own last message (what a command answered)."""
    chunks = [u for u in run.client.updates(run.session_id) if isinstance(u, AgentMessageChunk) and not u.field_meta]
    return str(chunks[-1].content.text)


def summary(run: Run) -> str:
    notes = [u for u in run.client.updates(run.session_id) if isinstance(u, AgentMessageChunk) and u.field_meta]
    return str(notes[-1].content.text)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def settings(make_settings: Any) -> Settings:
    result: Settings = make_settings(default_mode="bypass")
    return result


async def undo_cli(settings: Settings, monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.setenv("CODER_AGENT_HOME", str(settings.home))
    code: int = await anyio.to_thread.run_sync(sessions_main, ["undo", *args])
    return code


KINDS = {
    "no commit yet": "git init -q",
    "no repository": "true",
    "untracked in a repository": "git init -q && printf 'x\\n' > other && git add other && "
    "git -c user.email=t@t -c user.name=t commit -qm other",
}


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("profile", PROFILES)
async def test_undo_puts_back_what_a_command_changed_in_files_git_does_not_track(
    settings: Settings, srv: ScriptedModelServer, workspace: Path, profile: Profile, kind: str
) -> None:
    notes, made = workspace / "notes.txt", workspace / "made.txt"
    notes.write_text("alpha\n")
    sh(workspace, KINDS[kind])
    srv.enqueue(command("sed -i s/alpha/ALPHA/ notes.txt && printf 'new\\n' > made.txt"), Reply.text("done"))
    async with session(profile, settings, workspace) as run:
        assert await run.prompt("change it") == "end_turn"
        [report] = [u for u in run.client.updates(run.session_id) if isinstance(u, ToolCallStart) and u.kind == "edit"]
        shown = {Path(block.path).name: (block.old_text, block.new_text) for block in report.content or []}
        assert shown == {"made.txt": (None, "new\n"), "notes.txt": ("alpha\n", "ALPHA\n")}
        assert summary(run) == "\n\n**Changed 2 files**\n- `made.txt` +1 -0 (created)\n- `notes.txt` +1 -1"
        assert await run.prompt("/undo") == "end_turn"
        assert said(run) == (
            "**Undid the last turn's file changes**\n- restored `notes.txt`\n- deleted `made.txt` (the turn created it)"
        )
    assert notes.read_text() == "alpha\n" and not made.exists()


@pytest.mark.parametrize("profile", PROFILES)
async def test_modes_and_a_deleted_binary_file_come_back_as_they_were(
    settings: Settings, srv: ScriptedModelServer, workspace: Path, profile: Profile
) -> None:
    secret, script, plain, blob = (workspace / name for name in ("secret", "run.sh", "plain.txt", "data.bin"))
    secret.write_text("token\n")
    script.write_text("#!/bin/sh\n")
    plain.write_text("plain\n")
    blob.write_bytes(b"\x00\x01\x02binary\xff")
    os.chmod(secret, 0o600)
    os.chmod(script, 0o755)
    sh(workspace, "git init -q && git add -A && git -c user.email=t@t -c user.name=t commit -qm files")
    changes = "rm secret data.bin && printf 'echo\\n' >> run.sh && chmod 644 run.sh && chmod 600 plain.txt"
    srv.enqueue(command(changes), Reply.text("done"))
    async with session(profile, settings, workspace) as run:
        assert await run.prompt("change them") == "end_turn"
        assert "- `plain.txt` mode 644 -> 600" in summary(run).splitlines()
        assert await run.prompt("/undo") == "end_turn"
        assert said(run).count("restored") == 4
    assert (secret.read_text(), mode(secret)) == ("token\n", 0o600)
    assert (script.read_text(), mode(script)) == ("#!/bin/sh\n", 0o755)
    assert mode(plain) == 0o644 and blob.read_bytes() == b"\x00\x01\x02binary\xff"


def two_turns(srv: ScriptedModelServer, second_changes_a: bool) -> None:
    second = "printf 'b2\\n' > b.txt" + (" && printf 'v3\\n' > a.txt" if second_changes_a else "")
    srv.enqueue(command("printf 'v2\\n' > a.txt"), Reply.text("one"), command(second), Reply.text("two"))


@pytest.mark.parametrize("second_changes_a", [False, True], ids=["untouched-after", "changed-again"])
@pytest.mark.parametrize("how", ["/rewind 2", "sessions undo --turns 2"])
@pytest.mark.parametrize("profile", PROFILES)
async def test_going_back_two_turns_keeps_an_edit_the_user_made_between_them(
    settings: Settings,
    srv: ScriptedModelServer,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    profile: Profile,
    how: str,
    second_changes_a: bool,
) -> None:
    """Before: both erased the user's edit; two separate undos kept it."""
    a, b = workspace / "a.txt", workspace / "b.txt"
    a.write_text("v1\n")
    b.write_text("b1\n")
    two_turns(srv, second_changes_a)
    async with session(profile, settings, workspace) as run:
        assert await run.prompt("one") == "end_turn"
        a.write_text("the user's own\n")  # between the turns, in the editor
        assert await run.prompt("two") == "end_turn"
        if how == "/rewind 2":
            assert await run.prompt(how) == "end_turn"
            assert "- left `a.txt`: changed since (`/rewind 2 --force` overwrites it)" in said(run)
    if how != "/rewind 2":
        assert await undo_cli(settings, monkeypatch, run.session_id, "--turns", "2") == 1
    assert a.read_text() == "the user's own\n" and b.read_text() == "b1\n"


@pytest.mark.parametrize("changed_again", [False, True], ids=["left-as-the-user-saved-it", "then-changed-again"])
@pytest.mark.parametrize("profile", PROFILES)
async def test_undo_keeps_an_edit_the_user_saved_while_the_model_was_thinking(
    settings: Settings, srv: ScriptedModelServer, workspace: Path, profile: Profile, changed_again: bool
) -> None:
    """Before: `/undo` erased it and said "restored"."""
    a = workspace / "a.txt"
    a.write_text("v1\n")

    def user_saves(request: RecordedRequest) -> Reply | None:
        if len(srv.requests) == 1:  # the model is thinking after the command: the user saves in the editor
            a.write_text("the user's own\n")
        return None

    srv.respond = user_saves
    later = [command("printf 'more\\n' >> a.txt", "c2")] if changed_again else []
    srv.enqueue(command("printf 'v2\\n' > a.txt"), *later, Reply.text("done"))
    async with session(profile, settings, workspace) as run:
        assert await run.prompt("change it") == "end_turn"
        saved = a.read_text()
        assert await run.prompt("/undo") == "end_turn"
        assert said(run) == (
            "**Undid the last turn's file changes**\n- left `a.txt`: changed since (`/undo --force` overwrites it)"
        )
        assert a.read_text() == saved
        assert await run.prompt("/undo --force") == "end_turn"
    assert a.read_text() == "v1\n"


@pytest.mark.parametrize("how", ["/undo --force", "sessions undo --force"])
@pytest.mark.parametrize("profile", PROFILES)
async def test_undo_never_writes_through_a_file_swapped_for_a_link(
    settings: Settings,
    srv: ScriptedModelServer,
    workspace: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    profile: Profile,
    how: str,
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("not the project's\n")
    data, text = workspace / "data.bin", workspace / "notes.txt"
    data.write_bytes(b"\x00old")
    text.write_text("old\n")
    sh(workspace, "git init -q && git add -A && git -c user.email=t@t -c user.name=t commit -qm files")
    srv.enqueue(command("printf 'new\\000' > data.bin && printf 'new\\n' > notes.txt"), Reply.text("done"))
    async with session(profile, settings, workspace) as run:
        assert await run.prompt("change them") == "end_turn"
        for path in (data, text):
            path.unlink()
            path.symlink_to(outside)  # after the turn
        if how == "/undo --force":
            assert await run.prompt(how) == "end_turn"
            assert f"- left `data.bin`: it is a link to {outside} now: not written through" in said(run)
            assert f"- left `notes.txt`: it is a link to {outside} now: not written through" in said(run)
    if how != "/undo --force":
        assert await undo_cli(settings, monkeypatch, run.session_id, "--force") == 1
    assert outside.read_text() == "not the project's\n"
    assert data.is_symlink() and text.is_symlink()


@pytest.mark.parametrize("profile", PROFILES)
async def test_after_a_load_in_another_folder_undo_refuses_the_files_of_the_first_and_says_why(
    settings: Settings, srv: ScriptedModelServer, workspace: Path, tmp_path: Path, profile: Profile
) -> None:
    """Undo writes only inside the session's folders as they are now: the turn's files lie in the folder it was
    loaded from. Refused rather than asked: the paths may not mean the same files any more, and the refusal says
    how to undo them (load it there)."""
    a = workspace / "a.txt"
    a.write_text("v1\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    srv.enqueue(command("printf 'v2\\n' > a.txt"), Reply.text("done"))
    async with session(profile, settings, workspace) as run:
        assert await run.prompt("change it") == "end_turn"
    async with session(profile, settings, elsewhere, load=run.session_id) as loaded:
        assert await loaded.prompt("/undo") == "end_turn"
        assert said(loaded) == (
            "**Undid the last turn's file changes**\n"
            f"- left `{a}`: it is outside the session's folders now ({elsewhere}): not touched"
        )
    assert a.read_text() == "v2\n"
    async with session(profile, settings, workspace, load=run.session_id) as back:
        assert await back.prompt("/undo") == "end_turn"
    assert a.read_text() == "v1\n"


async def test_sessions_undo_refuses_a_session_live_in_an_agent_and_works_once_it_is_not(
    settings: Settings,
    srv: ScriptedModelServer,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    a = workspace / "a.txt"
    a.write_text("v1\n")
    srv.enqueue(command("printf 'v2\\n' > a.txt"), Reply.text("done"), Reply.text("heard"))
    async with session("bare", settings, workspace) as run:
        assert await run.prompt("change it") == "end_turn"
        assert await undo_cli(settings, monkeypatch, run.session_id) == 3
        assert f"session {run.session_id} is open in a running agent" in capsys.readouterr().err
        assert a.read_text() == "v2\n"
    assert await undo_cli(settings, monkeypatch, run.session_id) == 0
    assert a.read_text() == "v1\n"
    async with session("bare", settings, workspace, load=run.session_id) as loaded:
        assert await loaded.prompt("what now?") == "end_turn"
    assert "The user undid the file changes" in json.dumps(srv.requests[-1].body["messages"][-1])


async def test_a_session_live_in_one_agent_is_not_loaded_by_another_until_it_lets_go(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    """Two agents on one store (two editors): the second would save over the first's notes and undo under it."""
    srv.enqueue(Reply.text("hello"))
    async with session("bare", settings, workspace) as first:
        assert await first.prompt("hi") == "end_turn"
        async with inproc_agent(settings) as other:
            await other.conn.initialize(protocol_version=PROTOCOL_VERSION)
            with pytest.raises(RequestError, match="is open in another agent process"):
                await other.conn.load_session(session_id=first.session_id, cwd=str(workspace), mcp_servers=[])
    async with session("bare", settings, workspace, load=first.session_id) as second:
        assert second.session_id == first.session_id
