"""No language server outlives the agent process: not when its input ends (the editor closed it), not after a
`kill -9`. The server here ignores both the end of its input and SIGTERM (`--linger`), as a badly behaved one
would: only the agent's own killing of its group, or the watchdog's, ends it."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import anyio
import pytest
from acp import PROTOCOL_VERSION, text_block

from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.acp_client import RecordingClient, spawn_agent
from tests.support.agent_env import FIRST_PROMPT_TIMEOUT, EnvFactory
from tests.support.driving import model_saw
from tests.support.language_servers import fake_table
from tests.support.processes import alive, wait_gone

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

GONE_WITHIN = 10.0  # the exit deadline's SIGKILL comes within a second; the watchdog's after a second's grace


@pytest.mark.parametrize("ending", ["input closed", "kill -9"])
async def test_no_language_server_outlives_the_agent(
    srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path, tmp_path: Path, ending: str
) -> None:
    srv.enqueue(
        Reply.tool_calls([tool_call("write_file", {"path": "a.fake", "content": "ERROR\n"})]), Reply.text("done")
    )
    pidfile = tmp_path / "server.pid"  # the test server writes its pid there (the agent runs in the workspace too)
    env = agent_env(
        CODER_AGENT_LANGUAGE_SERVERS="1",
        CODER_AGENT_LSP=json.dumps({"fake": fake_table("--linger")}),
        LSP_TEST_PIDFILE=str(pidfile),
    )
    async with spawn_agent(env, client=RecordingClient("allow_once"), cwd=workspace) as agent:
        with anyio.fail_after(FIRST_PROMPT_TIMEOUT):
            await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
            session_id = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            await agent.conn.prompt(session_id=session_id, prompt=[text_block("write it")])
        assert "a.fake:1:1: error: error here [E1]" in model_saw(srv.requests[-1].body)
        servers = [int(line) for line in pidfile.read_text().split()]
        assert len(servers) == 1 and alive(servers[0])
        if ending == "kill -9":
            agent.proc.send_signal(signal.SIGKILL)
    if ending == "input closed":
        assert agent.proc.returncode == 0  # it exited by itself: nobody killed it
    assert await wait_gone(servers, GONE_WITHIN) == []
