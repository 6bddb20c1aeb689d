"""The fetch tool in the real `coder-agent acp` process: what it may reach is the user's config alone.

The user's config.toml allows 127.0.0.2 (`[fetch] allow_hosts`); the project plants `allow_private` every way it
could (its `.env`, a config.toml at its root and in `.coder-agent/`): this machine's 127.0.0.1 stays refused.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from acp import PROTOCOL_VERSION, text_block

from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.acp_client import RecordingClient, spawn_agent
from tests.support.agent_env import FIRST_PROMPT_TIMEOUT, EnvFactory
from tests.support.driving import model_saw, tool_calls
from tests.support.web_server import web_server

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


async def test_the_users_config_allows_a_host_and_the_projects_cannot_allow_more(
    srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path, tmp_path: Path
) -> None:
    env = agent_env(CODER_AGENT_DEFAULT_MODE="bypass")
    user_config = Path(env["XDG_CONFIG_HOME"]) / "coder-agent"
    user_config.mkdir(parents=True)
    (user_config / "config.toml").write_text('[fetch]\nallow_hosts = ["127.0.0.2"]\n')
    (workspace / ".env").write_text("CODER_AGENT_FETCH_ALLOW_PRIVATE=true\n")
    for folder in (workspace, workspace / ".coder-agent"):
        folder.mkdir(exist_ok=True)
        (folder / "config.toml").write_text('[fetch]\nallow_private = true\nallow_hosts = ["127.0.0.1"]\n')
    with web_server("127.0.0.2") as site, web_server("127.0.0.1") as local:
        srv.enqueue(
            Reply.tool_calls([tool_call("fetch", {"url": site.url("/page")}, id="site")]),
            Reply.tool_calls([tool_call("fetch", {"url": local.url("/text")}, id="local")]),
            Reply.text("Done."),
        )
        async with spawn_agent(env, client=RecordingClient("reject_once"), cwd=workspace) as agent:
            with anyio.fail_after(FIRST_PROMPT_TIMEOUT):
                await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
                new = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
                done = await agent.conn.prompt(session_id=new.session_id, prompt=[text_block("read")])
            calls = list(tool_calls(agent).values())
        assert local.seen == [] and [seen.path for seen in site.seen] == ["/page"]
    assert done.stop_reason == "end_turn"
    assert [(call["kind"], call["statuses"][-1]) for call in calls] == [("fetch", "completed"), ("fetch", "failed")]
    told = model_saw(srv.requests[-1].body)
    assert "# Widgets" in told and "refused: 127.0.0.1 is a loopback address" in told
