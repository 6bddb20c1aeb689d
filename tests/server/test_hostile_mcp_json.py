"""A project's `.mcp.json` that is no regular file inside the project: not read, nothing asked or started, the
user told at the first prompt and the log saying why."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, text_block
from acp.schema import AgentMessageChunk

from coder_agent.config.settings import Settings
from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.hostile_checkout import lay_out
from tests.support.inproc import inproc_agent
from tests.support.recording_client import RecordingClient

pytestmark = pytest.mark.anyio

RELEASE_AFTER = 10.0  # a regression blocks on the FIFO: then it is opened for writing, so the test ends


def _release(fifo: Path) -> None:
    """Open the FIFO's write end if a reader waits on it (a blocked open then reads an empty file)."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:  # nobody is reading it: nothing to release
        pass


@pytest.mark.parametrize(
    ("case", "why"),
    [("mcp-json-outside", "it leads outside the project's folders ({target})"), ("mcp-json-fifo", "it is a pipe")],
)
async def test_a_mcp_json_that_is_no_regular_file_in_the_project_is_not_read_and_the_user_is_told(
    make_settings: type[Settings],
    srv: ScriptedModelServer,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    case: str,
    why: str,
) -> None:
    checkout = lay_out([case], tmp_path / "project", tmp_path / "home")
    mcp_json = checkout.project / ".mcp.json"
    why = why.format(target=checkout.home / "planted-mcp.json")
    srv.enqueue(Reply.text("Done."))
    client = RecordingClient("allow_once")
    valve = threading.Timer(RELEASE_AFTER, _release, [mcp_json])
    valve.start()
    try:
        async with inproc_agent(make_settings(config_dir=tmp_path / "config"), client) as agent:
            await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
            started = time.monotonic()
            session_id = (await agent.conn.new_session(cwd=str(checkout.project), mcp_servers=[])).session_id
            new_took = time.monotonic() - started
            done = await agent.conn.prompt(session_id=session_id, prompt=[text_block("go")])
            said = [
                u.content.text
                for u in agent.client.updates(session_id)
                if isinstance(u, AgentMessageChunk) and hasattr(u.content, "text")
            ]
    finally:
        valve.cancel()
    assert new_took < RELEASE_AFTER / 2
    assert done.stop_reason == "end_turn"
    assert client.permission_requests == []  # nothing to approve: nothing was read
    assert not checkout.mcp_started.exists()
    assert said[0].startswith(f"The project's MCP servers were not started: {mcp_json} was not read: {why}")
    assert said[1:] == ["Done."]
    assert f"{mcp_json} was not read: {why}" in caplog.text
