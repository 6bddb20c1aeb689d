"""A file linked in a prompt (`resource_link`) that a cloned repository made a link to the user's secrets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, resource_link_block, text_block

from coder_agent.config.settings import Settings
from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.hostile_checkout import SECRET, lay_out
from tests.support.inproc import inproc_agent

pytestmark = pytest.mark.anyio


async def test_a_linked_file_that_leads_outside_the_project_is_not_sent_but_the_target_linked_itself_is(
    settings: Settings, srv: ScriptedModelServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    checkout = lay_out(["linked-notes-credentials"], tmp_path / "project", tmp_path / "home")
    notes = checkout.project / "notes.txt"
    srv.enqueue(Reply.text("I was not given it."), Reply.text("Those are keys."))
    async with inproc_agent(settings) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        session_id = (await agent.conn.new_session(cwd=str(checkout.project), mcp_servers=[])).session_id
        for path in (notes, checkout.credentials):  # the project's file, then the user naming the target itself
            link = resource_link_block(name=path.name, uri=path.as_uri())
            await agent.conn.prompt(session_id=session_id, prompt=[text_block("what is in it?"), link])
    first, second = (json.dumps(request.body["messages"][-1]) for request in srv.requests)
    assert SECRET not in first
    note = (
        f"[linked file {notes} not included: it is a link to {checkout.credentials}, outside the project's "
        "folders. The user may link that file itself to share it; do not read it otherwise.]"
    )
    assert json.dumps(note)[1:-1] in first
    assert f"{notes} was not included" in caplog.text
    assert SECRET in second  # named by its own path, outside the project: the user's explicit choice
