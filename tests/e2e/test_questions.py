"""The real process under the official SDK client, as an editor that renders forms and has no terminal: it logs
in through the form, then answers the model's question in another. (Each part in detail: tests/server/.)"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from acp import PROTOCOL_VERSION, text_block

from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.acp_client import spawn_agent
from tests.support.agent_env import FIRST_PROMPT_TIMEOUT, EnvFactory
from tests.support.driving import model_saw
from tests.support.eliciting_client import Elicitation, ElicitingClient, first_choices

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


async def test_a_form_client_logs_in_and_answers_the_models_question(
    srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path
) -> None:
    question = {"question": "Which database?", "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]}
    srv.enqueue(Reply.tool_calls([tool_call("ask_user", {"questions": [question]})]), Reply.text("Noted."))

    def answer(request: Elicitation) -> dict[str, object]:
        if "requestId" in request.params:  # the login
            return {"action": "accept", "content": {"provider": "local", "api_base": srv.url, "model": "scripted"}}
        return {"action": "accept", "content": first_choices(request.params["requestedSchema"])}

    client = ElicitingClient(answer, modes=["form"])
    env = agent_env(CODER_AGENT_MODEL=None, CODER_AGENT_API_KEY=None, CODER_AGENT_API_BASE=None)
    async with spawn_agent(env, client=client, cwd=workspace) as agent:
        with anyio.fail_after(FIRST_PROMPT_TIMEOUT):
            capabilities = client.capabilities
            init = await agent.conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities)
            assert init.auth_methods[0].id == "form-login"
            await agent.conn.authenticate(method_id="form-login")
            new = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
            done = await agent.conn.prompt(session_id=new.session_id, prompt=[text_block("set it up")])
    assert done.stop_reason == "end_turn"
    assert [request.mode for request in client.elicitations] == ["form", "form"]
    assert client.elicitations[1].params["sessionId"] == new.session_id
    assert 'Which database? → "PostgreSQL"' in model_saw(srv.requests[1].body)
