"""The model is told what was undone exactly once, whatever comes between: a command that asks it nothing
(`/compact`, `/undo`, `/rewind`) leaves the note waiting, a rewind of the prompt that carried it hands it on, and a
compaction's summary is written knowing it. A loaded session replays a `/rewind` with its prompt."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from acp.schema import AgentMessageChunk, UserMessageChunk

from coder_agent.config.settings import Settings
from coder_agent.scripted.records import RecordedRequest
from coder_agent.scripted.script import Reply, ToolCallStep
from coder_agent.scripted.server import ScriptedModelServer
from coder_agent.scripted.worker import SUMMARY_MARK
from tests.support.server_helpers import PROFILES, Profile, Run, session

pytestmark = pytest.mark.anyio

NOTE = "The user undid the file changes of the last turn(s)"


def command(text: str) -> Reply:
    return Reply.tool_calls([ToolCallStep(name="run_command", id="c1", arguments=json.dumps({"command": text}))])


@pytest.fixture
def settings(make_settings: Any) -> Settings:
    result: Settings = make_settings(default_mode="bypass")
    return result


def conversation(request: RecordedRequest) -> str:
    return json.dumps(request.body["messages"][1:])


def summaries(srv: ScriptedModelServer) -> list[RecordedRequest]:
    return [r for r in srv.requests if SUMMARY_MARK in str(r.body["messages"][0]["content"])]


def turns_of(srv: ScriptedModelServer) -> list[RecordedRequest]:
    return [r for r in srv.requests if SUMMARY_MARK not in str(r.body["messages"][0]["content"])]


def committed(workspace: Path) -> None:
    (workspace / "a.txt").write_text("v1\n")
    script = "git init -q && git add -A && git -c user.email=t@t -c user.name=t commit -qm a"
    subprocess.run(["/bin/sh", "-c", script], cwd=workspace, check=True, capture_output=True)


async def changed_then_undone(run: Run, srv: ScriptedModelServer, workspace: Path) -> None:
    srv.enqueue(command("printf 'v2\\n' > a.txt"), Reply.text("changed"))
    assert await run.prompt("change a") == "end_turn"
    assert await run.prompt("/undo") == "end_turn"
    assert (workspace / "a.txt").read_text() == "v1\n"


@pytest.mark.parametrize("between", ["/undo", "/compact", "/rewind 1"])
@pytest.mark.parametrize("profile", PROFILES)
async def test_a_command_between_the_undo_and_the_next_prompt_leaves_the_note_waiting(
    settings: Settings, srv: ScriptedModelServer, workspace: Path, profile: Profile, between: str
) -> None:
    """Before: the command's own prompt took the note, and no request ever mentioned the undo."""
    committed(workspace)  # what a.txt held is git's: undo worked there before too
    # Long enough that `/compact` has something to free (a conversation under ~200 tokens is kept as it is)
    srv.enqueue(command("printf 'v2\\n' > a.txt"), Reply.text("changed " * 300), Reply.text("a talk"))
    async with session(profile, settings, workspace) as run:
        assert await run.prompt("change a") == "end_turn"
        assert await run.prompt("just talk") == "end_turn"
        assert await run.prompt("/undo") == "end_turn"  # the turn that changed a.txt, not the talk after it
        assert (workspace / "a.txt").read_text() == "v1\n"
        if between == "/compact":
            srv.enqueue(Reply.text("SUMMARY: the user asked for a change to a.txt"))
        assert await run.prompt(between) == "end_turn"  # `/rewind 1` goes back over the talk alone
        srv.enqueue(Reply.text("noted"))
        assert await run.prompt("what now?") == "end_turn"
    last = turns_of(srv)[-1]
    assert conversation(last).count(NOTE) == 1
    assert NOTE in json.dumps(last.body["messages"][-1])
    if between == "/compact":
        [request] = summaries(srv)
        assert NOTE in json.dumps(request.body["messages"][-1])  # the summary is written knowing it


@pytest.mark.parametrize("profile", PROFILES)
async def test_a_rewind_of_the_prompt_that_carried_the_note_hands_it_on(
    settings: Settings, srv: ScriptedModelServer, workspace: Path, profile: Profile
) -> None:
    committed(workspace)  # what a.txt held is git's: undo worked there before too
    async with session(profile, settings, workspace) as run:
        await changed_then_undone(run, srv, workspace)
        srv.enqueue(Reply.text("I see"), Reply.text("again"))
        assert await run.prompt("what happened?") == "end_turn"  # carries the note
        assert NOTE in conversation(srv.requests[-1])
        assert await run.prompt("/rewind 1") == "end_turn"
        assert await run.prompt("and now?") == "end_turn"
    last = conversation(srv.requests[-1])
    assert last.count(NOTE) == 1 and "what happened?" not in last


@pytest.mark.parametrize("profile", PROFILES)
async def test_a_loaded_session_replays_the_rewind_prompt_above_what_it_answered(
    settings: Settings, srv: ScriptedModelServer, workspace: Path, profile: Profile
) -> None:
    srv.enqueue(Reply.text("one"), Reply.text("two"))
    async with session(profile, settings, workspace) as run:
        assert await run.prompt("first") == "end_turn"
        assert await run.prompt("second") == "end_turn"
        assert await run.prompt("/rewind 1") == "end_turn"
    async with session(profile, settings, workspace, load=run.session_id) as loaded:
        replayed = [
            (type(u).__name__, u.content.text)
            for u in loaded.client.updates(loaded.session_id)
            if isinstance(u, UserMessageChunk | AgentMessageChunk)
        ]
    assert replayed[-2:] == [
        ("UserMessageChunk", "/rewind 1"),
        ("AgentMessageChunk", "Went back 1 turn; the model no longer sees them. No file changed."),
    ]
    assert ("UserMessageChunk", "second") not in replayed and ("UserMessageChunk", "first") in replayed
