"""A run is a stored session like any other: an editor can load it, and `--session` continues it."""

from __future__ import annotations

from pathlib import Path

import anyio
from acp import PROTOCOL_VERSION

from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer
from coder_agent.store.sqlite import SqliteSessionStore
from tests.support.inproc import inproc_agent
from tests.support.inproc import test_settings as agent_settings
from tests.support.run_helpers import RunInProcess, chat


def test_the_run_is_stored_and_an_editor_can_load_it(
    srv: ScriptedModelServer, run_cli_here: RunInProcess, workspace: Path, home: Path
) -> None:
    srv.enqueue(Reply.text("Stored ", "answer"))
    ran = run_cli_here(["--json", "--prompt", "remember this"])
    assert ran.code == 0, ran
    session_id = ran.result()["sessionId"]
    store = SqliteSessionStore(home / "sessions.db")
    try:
        record = store.get(session_id)
        assert record is not None
        assert record.cwd == str(workspace)
        assert record.mode == "accept-edits"
        assert record.title == "remember this"
        assert len(store.messages(session_id)) == 2  # the prompt and the reply
    finally:
        store.close()

    async def load() -> None:
        async with inproc_agent(agent_settings(home, srv.url)) as editor:
            await editor.conn.initialize(protocol_version=PROTOCOL_VERSION)
            await editor.conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
            await editor.client.wait_for(lambda: editor.client.agent_text(session_id) == "Stored answer", 10)

    anyio.run(load)


def test_session_continues_a_stored_run_with_the_earlier_exchange_in_context(
    srv: ScriptedModelServer, run_cli_here: RunInProcess, workspace: Path
) -> None:
    srv.enqueue(Reply.text("First ", "answer"), Reply.text("Second answer"))
    first = run_cli_here(["--json", "--prompt", "first question"])
    session_id = first.result()["sessionId"]
    second = run_cli_here(["--json", "--session", session_id, "--prompt", "second question"])
    assert second.code == 0, second
    assert second.result()["sessionId"] == session_id
    assert chat(srv.requests[1].body) == [
        ("user", "first question"),
        ("assistant", "First answer"),
        ("user", "second question"),
    ]
    assert second.updates("user_message_chunk") == []  # resumed, not replayed


def test_an_unknown_session_exits_1(srv: ScriptedModelServer, run_cli_here: RunInProcess, workspace: Path) -> None:
    ran = run_cli_here(["--session", "sess_nope", "--prompt", "hi"])
    assert ran.code == 1, ran
    assert "sess_nope" in ran.stderr


def test_continue_takes_this_folders_last_session_and_resume_takes_an_id_prefix_or_last(
    srv: ScriptedModelServer, run_cli_here: RunInProcess, workspace: Path
) -> None:
    """What `claude -c` / `claude --resume` and `codex resume --last` users reach for."""
    srv.enqueue(*(Reply.text(f"answer {n}") for n in range(1, 6)))
    first = run_cli_here(["--json", "first question"]).result()["sessionId"]
    second = run_cli_here(["--json", "another topic"]).result()["sessionId"]
    continued = run_cli_here(["--json", "-c", "and then?"])
    last = run_cli_here(["--json", "--resume", "last", "and last?"])
    by_prefix = run_cli_here(["--json", "--resume", first.removeprefix("sess_")[:8], "back to the first"])
    for ran in (continued, last, by_prefix):
        assert ran.code == 0, ran
        assert ran.lines()[0]["resumed"] is True
    assert continued.result()["sessionId"] == last.result()["sessionId"] == second
    assert by_prefix.result()["sessionId"] == first
    assert chat(srv.requests[-1].body)[:2] == [("user", "first question"), ("assistant", "answer 1")]


def test_continue_in_a_folder_without_sessions_and_an_ambiguous_prefix_exit_1_saying_why(
    srv: ScriptedModelServer, run_cli_here: RunInProcess, workspace: Path
) -> None:
    nothing = run_cli_here(["-c", "hi"])
    srv.enqueue(Reply.text("one"), Reply.text("two"))
    run_cli_here(["one"])
    run_cli_here(["two"])
    ambiguous = run_cli_here(["--resume", "sess_", "hi"])
    assert nothing.code == 1 and "no stored session of" in nothing.stderr and str(workspace) in nothing.stderr
    assert ambiguous.code == 1 and "names 2 sessions" in ambiguous.stderr
    assert len(srv.requests) == 2
