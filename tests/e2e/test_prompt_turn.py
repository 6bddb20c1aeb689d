"""The real process under the official SDK client: the early `initialize`, and one prompt turn with tools.

What a turn does is tested in process (tests/server/); this is the same agent started as editors start it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from acp import PROTOCOL_VERSION, text_block

from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.acp_client import SpawnedAgent, spawn_agent
from tests.support.agent_env import FIRST_PROMPT_TIMEOUT, EnvFactory
from tests.support.driving import model_saw, tool_calls
from tests.support.editor_client import EditorClient

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


async def test_a_newer_protocol_version_from_the_client_is_answered_with_1(
    agent_env: EnvFactory, workspace: Path
) -> None:
    async with spawn_agent(agent_env(), cwd=workspace) as agent:
        with anyio.fail_after(10):
            first = await agent.conn.initialize(protocol_version=2)  # answered before the runtime loads
            again = await agent.conn.initialize(protocol_version=99)  # answered by the full connection
    assert first.protocol_version == 1
    assert again.protocol_version == 1
    assert first == again


@asynccontextmanager
async def editor_session(env: dict[str, str], workspace: Path) -> AsyncIterator[tuple[SpawnedAgent, str]]:
    async with anyio.create_task_group() as tg:
        client = EditorClient(tg)
        async with spawn_agent(env, client=client, cwd=workspace) as agent:
            with anyio.fail_after(20):
                await agent.conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=client.capabilities)
                new = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
            yield agent, new.session_id
        tg.cancel_scope.cancel()


async def test_a_turn_writes_edits_and_runs_a_command_through_the_editor(
    srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path
) -> None:
    srv.enqueue(
        Reply.tool_calls([tool_call("write_file", {"path": "app.py", "content": "x = 1\n"}, id="w")]),
        Reply.tool_calls([tool_call("edit_file", {"path": "app.py", "old_string": "1", "new_string": "2"}, id="e")]),
        Reply.tool_calls([tool_call("run_command", {"command": "cat app.py; exit 3"}, id="r")]),
        Reply.text("Done."),
    )
    async with editor_session(agent_env(), workspace) as (agent, session_id):
        with anyio.fail_after(FIRST_PROMPT_TIMEOUT):
            done = await agent.conn.prompt(session_id=session_id, prompt=[text_block("make app.py and run it")])
        write, edit, run = tool_calls(agent).values()
        assert isinstance(agent.client, EditorClient)
        methods = agent.client.methods()
        asked = [r.tool_call.tool_call_id for r in agent.client.permission_requests]
    assert done.stop_reason == "end_turn"
    assert (workspace / "app.py").read_text() == "x = 2\n"
    assert write["kind"] == "edit" and write["statuses"] == ["pending", "in_progress", "completed"]
    [diff] = [c for c in write["content"] if c["type"] == "diff"]
    assert diff == {"type": "diff", "path": str(workspace / "app.py"), "oldText": None, "newText": "x = 1\n"}
    assert edit["locations"][0]["path"] == str(workspace / "app.py")
    assert asked == [write["toolCallId"], edit["toolCallId"], run["toolCallId"]]
    assert methods.count("fs/write_text_file") == 2  # the editor saw both writes
    assert methods[-1] == "terminal/release" and "terminal/create" in methods
    assert any(c["type"] == "terminal" for c in run["content"])
    told = model_saw(srv.requests[3].body)
    assert "x = 2" in told and "3" in told
