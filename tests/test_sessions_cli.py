"""`coder-agent sessions`: what each command prints for a stored session, and how it fails."""

from __future__ import annotations

import json
import secrets
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from coder_agent.cli.main import main as cli_main
from coder_agent.cli.sessions import main
from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer
from coder_agent.store.base import SessionRecord
from coder_agent.store.sqlite import SqliteSessionStore
from tests.support.driving import open_session, prompt
from tests.support.inproc import inproc_agent
from tests.support.inproc import test_settings as agent_settings


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


UPDATES: list[dict[str, Any]] = [
    {"sessionUpdate": "user_message_chunk", "content": text("Fix the bug in"), "messageId": "u1"},
    {
        "sessionUpdate": "user_message_chunk",
        "content": {"type": "resource_link", "uri": "file:///w/a.py", "name": "a.py"},
        "messageId": "u1",
    },
    {"sessionUpdate": "agent_thought_chunk", "content": text("The loop "), "messageId": "t1"},
    {"sessionUpdate": "agent_thought_chunk", "content": text("is off by one."), "messageId": "t1"},
    {"sessionUpdate": "agent_message_chunk", "content": text("Let me "), "messageId": "m1"},
    {"sessionUpdate": "agent_message_chunk", "content": text("look."), "messageId": "m1"},
    {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Read a.py", "kind": "read", "status": "pending"},
    {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "in_progress"},
    {"sessionUpdate": "plan", "entries": [{"content": "Find it", "priority": "high", "status": "in_progress"}]},
    {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "status": "completed",
        "content": [{"type": "content", "content": text("\n".join(f"line {i}" for i in range(1, 10)))}],
    },
    {
        "sessionUpdate": "tool_call",
        "toolCallId": "c2",
        "title": "Edit a.py",
        "kind": "edit",
        "content": [{"type": "diff", "path": "/w/a.py", "oldText": "a\nb\nc\n", "newText": "a\nB\nc\nd\n"}],
    },
    {"sessionUpdate": "tool_call_update", "toolCallId": "c2", "status": "failed"},
    {
        "sessionUpdate": "tool_call",
        "toolCallId": "c3",
        "title": "Write t.py",
        "status": "completed",
        "content": [{"type": "diff", "path": "/w/t.py", "oldText": None, "newText": "x\ny\n"}],
    },
    {
        "sessionUpdate": "plan",
        "entries": [
            {"content": "Find it", "priority": "high", "status": "completed"},
            {"content": "Fix it", "priority": "high", "status": "in_progress"},
            {"content": "Test it", "priority": "low", "status": "pending"},
        ],
    },
    {
        "sessionUpdate": "tool_call",
        "toolCallId": "compact_1",
        "title": "Compacting the conversation",
        "kind": "think",
        "status": "in_progress",
    },
    {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "compact_1",
        "status": "completed",
        "content": [
            {"type": "content", "content": text("Context in use: ~41,000 -> ~12,000 tokens (~29,000 freed).")},
            {"type": "content", "content": text("The user is fixing a loop.")},
        ],
    },
    {"sessionUpdate": "agent_message_chunk", "content": text("Fixed."), "messageId": "m2"},
    {"sessionUpdate": "usage_update", "used": 1500, "size": 128000, "cost": {"amount": 0.02, "currency": "USD"}},
    {"sessionUpdate": "session_info_update", "title": "Fix the bug"},
    {"sessionUpdate": "current_mode_update", "currentModeId": "plan"},
]

SHOWN = """\
Fix the bug
sess_1 (forked from sess_0) in /w
created 2026-01-02 03:04 UTC, updated 2026-01-02 03:05 UTC

> Fix the bug in @a.py
(thinking) The loop is off by one.

Let me look.
Plan
  ✔ Find it
  ▶ Fix it
  ☐ Test it

✓ Read a.py
● Edit a.py
  --- a/a.py
  +++ b/a.py
  @@ -1,3 +1,4 @@
   a
  -b
  +B
   c
  +d
✗ Edit a.py
✓ Write t.py
  --- /dev/null
  +++ b/t.py
  @@ -0,0 +1,2 @@
  +x
  +y
✓ Compacted the conversation  Context in use: ~41,000 -> ~12,000 tokens (~29,000 freed).
Fixed.
-- mode: plan --
context: 1500 of 128000 tokens, cost 0.02 USD
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CODER_AGENT_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)  # no stray .env
    return tmp_path / "home"


@pytest.fixture
def store(home: Path) -> Iterator[SqliteSessionStore]:
    store = SqliteSessionStore(home / "sessions.db")
    record = SessionRecord(
        id="sess_1",
        cwd="/w",
        title="Fix the bug",
        created_at="2026-01-02T03:04:05.000Z",
        updated_at="2026-01-02T03:05:06.000Z",
        state={"rules": {}},
        parent_id="sess_0",
    )
    store.create(record)
    for update in UPDATES:
        store.append_update("sess_1", json.dumps(update).encode())
    store.append_messages("sess_1", ['{"role":"user","parts":[{"type":"text","text":"Fix the bug"}]}'])
    yield store
    store.close()


def test_show_renders_prompts_replies_thoughts_tool_calls_and_the_last_plan_of_the_turn(
    store: SqliteSessionStore, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["show", "sess_1"]) == 0
    assert capsys.readouterr().out == SHOWN


def test_show_names_a_call_that_never_finished_and_updates_it_cannot_read(
    store: SqliteSessionStore, capsys: pytest.CaptureFixture[str]
) -> None:
    started = {"sessionUpdate": "tool_call", "toolCallId": "c9", "title": "make test", "status": "in_progress"}
    store.append_update("sess_1", json.dumps(started).encode())
    store.append_update("sess_1", b'{"sessionUpdate": "tool_call", "title": 7}')
    assert main(["show", "sess_1"]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert "● make test  (not finished)" in shown
    assert "(1 stored updates could not be read)" in shown


def test_export_holds_the_record_the_messages_and_every_update(
    store: SqliteSessionStore, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["export", "sess_1"]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert exported["session"]["id"] == "sess_1" and exported["session"]["parent_id"] == "sess_0"
    assert exported["messages"] == [{"role": "user", "parts": [{"type": "text", "text": "Fix the bug"}]}]
    assert exported["updates"] == UPDATES
    assert main(["export", "sess_1", "-o", str(tmp_path / "out.json")]) == 0
    assert json.loads((tmp_path / "out.json").read_text()) == exported


def test_list_is_newest_first_filters_by_folder_and_says_when_there_is_more(
    store: SqliteSessionStore, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "proj").mkdir()
    for i in (2, 3):
        stamp = f"2026-01-0{i + 1}T00:00:00.000Z"
        store.create(SessionRecord(id=f"sess_{i}", cwd=str(tmp_path / "proj"), created_at=stamp, updated_at=stamp))
    assert main(["list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [s["id"] for s in listed] == ["sess_3", "sess_2", "sess_1"]
    assert "state" not in listed[0]
    assert main(["list", "--cwd", "proj", "--limit", "1"]) == 0  # a relative folder, as typed in a shell
    out = capsys.readouterr().out
    assert out.splitlines() == [
        "sess_3  2026-01-04 00:00 UTC  (untitled)",
        f"    {tmp_path / 'proj'}",
        "(more sessions: raise --limit above 1)",
    ]
    assert main(["list", "--cwd", "/nowhere"]) == 0
    assert capsys.readouterr().out == "No saved sessions in /nowhere.\n"


def test_delete_removes_known_sessions_and_fails_with_1_naming_unknown_ones(
    store: SqliteSessionStore, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["delete", "sess_unknown", "sess_1"]) == 1
    out, err = capsys.readouterr()
    assert out == "Deleted sess_1\n"
    assert "unknown session sess_unknown" in err
    assert store.get("sess_1") is None and list(store.updates("sess_1")) == []
    for command in (["show", "sess_1"], ["export", "sess_1"]):
        assert main(command) == 1
        assert "unknown session sess_1" in capsys.readouterr().err


@pytest.mark.parametrize("folder_exists", [False, True])  # True: the agent ran (and logged) but saved nothing
def test_before_any_session_is_saved_list_says_so_and_nothing_is_created(
    home: Path, folder_exists: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    if folder_exists:
        (home / "logs").mkdir(parents=True)
    assert main(["list"]) == 0
    out, err = capsys.readouterr()
    assert out == f"No saved sessions yet (the agent creates {home / 'sessions.db'} for the first one).\n"
    assert err == ""
    assert main(["list", "--json", "--cwd", "/w"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert not (home / "sessions.db").exists()
    assert home.exists() == folder_exists


@pytest.mark.parametrize("argv", [["show", "sess_1"], ["export", "sess_1", "-o", "out.json"], ["delete", "sess_1"]])
def test_before_any_session_is_saved_a_named_session_is_unknown_and_nothing_is_created(
    home: Path, argv: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert out == ""
    store = home / "sessions.db"
    assert err == f"coder-agent: unknown session sess_1: no sessions saved yet ({store} does not exist)\n"
    assert not home.exists()
    assert not (tmp_path / "out.json").exists()


def test_a_corrupt_store_fails_with_2_naming_the_file_and_no_traceback(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home.mkdir()
    (home / "sessions.db").write_bytes(b"garbage" * 1000)
    assert main(["show", "sess_1"]) == 2
    err = capsys.readouterr().err
    assert str(home / "sessions.db") in err and "not a database" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("argv", [[], ["list", "--limit", "0"], ["show"], ["frobnicate"]])
def test_a_bad_command_line_fails_with_2_and_usage(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert "usage: coder-agent sessions" in capsys.readouterr().err


def test_a_session_whose_last_turn_failed_or_was_cancelled_says_so_in_list_and_show(
    store: SqliteSessionStore, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    stamp = "2026-02-01T00:00:00.000Z"
    failed = {"stop_reason": "error", "error": "The model provider failed (500): boom", "at": stamp}
    for session_id, turn in (("sess_bad", failed), ("sess_stop", {"stop_reason": "cancelled", "at": stamp})):
        record = SessionRecord(id=session_id, cwd=str(tmp_path), created_at=stamp, updated_at=stamp, title="t")
        record.state = {"last_turn": turn}
        store.create(record)
    assert main(["list", "--cwd", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "sess_bad  2026-02-01 00:00 UTC  t  [last turn failed: The model provider failed (500): boom]" in out
    assert "sess_stop  2026-02-01 00:00 UTC  t  [last turn: cancelled]" in out
    assert main(["list", "--json", "--cwd", str(tmp_path)]) == 0
    listed = {s["id"]: s for s in json.loads(capsys.readouterr().out)}
    assert listed["sess_bad"]["last_turn"] == failed
    assert main(["show", "sess_bad"]) == 0
    assert "last turn failed: The model provider failed (500): boom" in capsys.readouterr().out


def test_export_puts_an_image_stored_once_back_in_its_update_and_its_message(
    store: SqliteSessionStore, capsys: pytest.CaptureFixture[str]
) -> None:
    store.put_blob("sess_1", "a" * 64, "aGVsbG8=")
    reference = "coder-agent-blob:" + "a" * 64
    image = {"type": "image", "data": reference, "mimeType": "image/png"}
    store.append_update("sess_1", json.dumps({"sessionUpdate": "user_message_chunk", "content": image}).encode())
    store.append_messages("sess_1", [json.dumps({"role": "user", "parts": [{"type": "image", "data": reference}]})])
    assert main(["export", "sess_1"]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert exported["updates"][-1]["content"]["data"] == "aGVsbG8="
    assert exported["messages"][-1]["parts"][0]["data"] == "aGVsbG8="


def test_list_show_export_and_delete_a_session_the_agent_recorded(
    home: Path, srv: ScriptedModelServer, workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    srv.enqueue(Reply.thinking_then_text(["Counting."], ["The answer ", "is 42."]))

    async def record() -> str:
        async with inproc_agent(agent_settings(home, srv.url)) as agent:
            session_id = await open_session(agent, workspace)
            await prompt(agent, session_id, "What is the answer?")
            return session_id

    session_id = anyio.run(record)

    def sessions(*args: str) -> tuple[int, str, str]:
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    code, listed, err = sessions("list")
    assert code == 0, err
    assert f"{session_id}  " in listed and "What is the answer?" in listed
    as_json = json.loads(sessions("list", "--json", "--cwd", str(workspace))[1])
    assert [(s["id"], s["title"]) for s in as_json] == [(session_id, "What is the answer?")]

    code, shown, err = sessions("show", session_id)
    assert code == 0, err
    assert "> What is the answer?\n" in shown
    assert "\nThe answer is 42.\n" in shown
    assert "(thinking) Counting." in shown

    code, _, err = sessions("export", session_id, "-o", str(tmp_path / "export.json"))
    assert code == 0, err
    exported = json.loads((tmp_path / "export.json").read_text())
    assert exported["session"]["id"] == session_id
    chunks = [u["content"]["text"] for u in exported["updates"] if u["sessionUpdate"] == "agent_message_chunk"]
    assert chunks == ["The answer ", "is 42."]
    assert [m["role"] for m in exported["messages"]] == ["user", "assistant"]

    assert sessions("delete", session_id)[:2] == (0, f"Deleted {session_id}\n")
    code, _, err = sessions("show", session_id)
    assert code == 1
    assert f"unknown session {session_id}" in err and "Traceback" not in err
    assert sessions("list")[1] == "No saved sessions.\n"


def test_a_session_an_older_version_stored_with_a_key_is_shown_and_exported_without_it(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    key = "live-" + secrets.token_hex(20)
    monkeypatch.setenv("CODER_AGENT_API_KEY", key)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # not the user's own files
    store = SqliteSessionStore(home / "sessions.db")
    store.create(SessionRecord(id="sess_k", cwd="/w", created_at="2026-01-02T03:04:05.000Z"))
    store.close()
    said = f"The provider said: bad key {key}"
    with sqlite3.connect(home / "sessions.db") as db:  # rows as a version that did not mask them wrote them
        update = {"sessionUpdate": "agent_message_chunk", "content": text(said), "messageId": "m1"}
        db.execute("INSERT INTO updates VALUES ('sess_k', 1, ?)", (json.dumps(update).encode(),))
        db.execute("INSERT INTO messages VALUES ('sess_k', 1, ?)", (json.dumps({"role": "assistant", "text": said}),))
    exported = tmp_path / "exported.json"
    for args in (["show", "sess_k"], ["export", "sess_k"], ["export", "sess_k", "-o", str(exported)]):
        with pytest.raises(SystemExit) as ended:
            cli_main(["sessions", *args])
        assert ended.value.code == 0
    printed = capsys.readouterr()
    assert key not in printed.out + printed.err and key not in exported.read_text()
    assert printed.out.count("bad key [secret CODER_AGENT_API_KEY]") == 3  # shown, and the export's two texts
    assert exported.read_text().count("bad key [secret CODER_AGENT_API_KEY]") == 2
