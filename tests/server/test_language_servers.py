"""A session's language servers through the protocol, with the small test server configured as a user would
(`[lsp.fake]`): when one starts and stops, and that a server that hangs or is missing never holds up or fails an
edit. (With a real Python server: test_edit_diagnostics.py.)"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from coder_agent.config.settings import Settings
from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.driving import model_saw
from tests.support.language_servers import fake_table, running_in
from tests.support.processes import alive
from tests.support.server_helpers import session

pytestmark = pytest.mark.anyio


def with_servers(make_settings: Any, lsp: dict[str, Any], **extra: Any) -> Settings:
    settings: Settings = make_settings(language_servers=True, lsp=lsp, **extra)
    return settings


async def test_a_server_starts_with_the_first_edit_of_its_files_and_stops_with_the_session(
    srv: ScriptedModelServer, make_settings: Any, workspace: Path
) -> None:
    (workspace / "old.fake").write_text("fine\n")
    srv.enqueue(
        Reply.tool_calls([tool_call("read_file", {"path": "old.fake"})]),
        Reply.text("read"),
        Reply.tool_calls([tool_call("write_file", {"path": "new.fake", "content": "ok\nERROR here\n"})]),
        Reply.text("done"),
    )
    settings = with_servers(make_settings, {"fake": fake_table("--linger")})  # it ignores stdin's end and SIGTERM
    async with session("bare", settings, workspace) as run:
        assert await run.prompt("read it") == "end_turn"
        assert running_in(workspace) == []  # not for initialize, session/new, nor a read
        assert await run.prompt("write it") == "end_turn"
        assert "new.fake:2:1: error: error here [E1]" in model_saw(srv.requests[-1].body)
        [pid] = running_in(workspace)
        with anyio.fail_after(15):
            await run.agent.conn.close_session(session_id=run.session_id)
        assert not alive(pid)


async def test_a_server_that_hangs_holds_an_edit_no_longer_than_the_wait(
    srv: ScriptedModelServer, make_settings: Any, workspace: Path
) -> None:
    srv.enqueue(
        Reply.tool_calls([tool_call("write_file", {"path": "a.fake", "content": "ERROR\n"})]), Reply.text("done")
    )
    settings = with_servers(make_settings, {"fake": fake_table("--hang")}, lsp_wait=1.0)
    async with session("bare", settings, workspace) as run:
        started = time.monotonic()
        assert await run.prompt("write it") == "end_turn"
        took = time.monotonic() - started
        [call] = run.tool_calls().values()
    assert took < 1.0 + 2.5  # the wait, and the two model turns and the write around it
    assert call["statuses"][-1] == "completed"
    told = model_saw(srv.requests[-1].body)
    assert told.startswith("created a.fake\nfake is still starting: a.fake not checked yet; the next edit's check")
    assert (workspace / "a.fake").read_text() == "ERROR\n"


async def test_a_missing_server_is_skipped_without_a_word_to_the_model(
    srv: ScriptedModelServer, make_settings: Any, workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    srv.enqueue(
        Reply.tool_calls([tool_call("write_file", {"path": "a.fake", "content": "ERROR\n"})]),
        Reply.tool_calls([tool_call("diagnostics", {"path": "a.fake"})]),
        Reply.text("done"),
    )
    caplog.set_level(logging.INFO, logger="coder_agent.lsp")
    missing = {"command": "no-such-server-for-fake", "extensions": [".fake"]}
    async with session("bare", with_servers(make_settings, {"fake": missing}), workspace) as run:
        assert await run.prompt("write it") == "end_turn"
        write, look = run.tool_calls().values()
    assert write["statuses"][-1] == "completed"
    assert model_saw(srv.requests[1].body) == "created a.fake"
    assert look["statuses"][-1] == "completed"  # asked outright, the model is told why
    told = model_saw(srv.requests[2].body).split("created a.fake\n")[-1]
    assert told.startswith("No language server could check these files")
    assert "fake: no-such-server-for-fake was not found on PATH" in told
    said = [r for r in caplog.records if "no-such-server-for-fake" in r.getMessage()]
    assert len(said) == 1


async def test_language_servers_off_check_nothing(
    srv: ScriptedModelServer, make_settings: Any, workspace: Path
) -> None:
    srv.enqueue(
        Reply.tool_calls([tool_call("write_file", {"path": "a.fake", "content": "ERROR\n"})]),
        Reply.tool_calls([tool_call("diagnostics", {})]),
        Reply.text("done"),
    )
    settings = make_settings(language_servers=False, lsp={"fake": fake_table()})
    async with session("bare", settings, workspace) as run:
        assert await run.prompt("write it") == "end_turn"
    assert model_saw(srv.requests[1].body) == "created a.fake"
    assert "language servers are off" in model_saw(srv.requests[2].body)
    assert running_in(workspace) == []


async def test_a_patch_over_several_files_is_told_each_files_new_problems(
    srv: ScriptedModelServer, make_settings: Any, workspace: Path
) -> None:
    (workspace / "one.fake").write_text("keep\nERROR old\n")
    (workspace / "two.fake").write_text("fine\n")
    patch = (
        "--- a/one.fake\n+++ b/one.fake\n@@ -1,2 +1,3 @@\n keep\n+added\n ERROR old\n"
        "--- a/two.fake\n+++ b/two.fake\n@@ -1 +1,2 @@\n fine\n+WARN now\n"
        "--- /dev/null\n+++ b/three.txt\n@@ -0,0 +1 @@\n+ERROR in a file no server checks\n"
    )
    srv.enqueue(Reply.tool_calls([tool_call("apply_patch", {"patch": patch})]), Reply.text("done"))
    async with session("bare", with_servers(make_settings, {"fake": fake_table()}), workspace) as run:
        assert await run.prompt("patch it") == "end_turn"
    told = model_saw(srv.requests[-1].body).splitlines()
    assert told[0] == "updated one.fake; updated two.fake; created three.txt"
    assert told[1:] == ["1 new problem (fake):", "two.fake:2:1: warning: warn here [W1]"]
