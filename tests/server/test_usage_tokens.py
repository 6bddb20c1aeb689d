"""Each `usage_update` carries the call's token split in `_meta["coder-agent"].usage`: the prompt tokens (cached or
not), the cache reads and writes among them, and the output tokens; eval runs and Harbor's results add them up per
trial."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from coder_agent.scripted.script import FinishStep, Reply, TextStep, UsageStep
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.driving import open_session, prompt, session_updates
from tests.support.inproc import inproc_agent
from tests.support.inproc import test_settings as agent_settings

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("model", ["openai/scripted", "anthropic/claude-sonnet-4-5"])
async def test_a_usage_update_says_how_many_tokens_went_in_came_from_the_cache_and_came_out(
    srv: ScriptedModelServer, tmp_path: Path, workspace: Path, model: str
) -> None:
    usage = UsageStep(prompt_tokens=1200, completion_tokens=40, cache_read_tokens=1000, cache_creation_tokens=100)
    srv.enqueue(Reply(steps=[TextStep(pieces=["Done", "."]), FinishStep(), usage]))
    api_base = srv.anthropic_url if model.startswith("anthropic/") else srv.url
    async with inproc_agent(agent_settings(tmp_path / "home", api_base, model=model)) as agent:
        with anyio.fail_after(30):
            session_id = await open_session(agent, workspace)
            assert await prompt(agent, session_id, "hello") == "end_turn"
    [update] = [u for u in session_updates(agent.messages, session_id) if u["sessionUpdate"] == "usage_update"]
    assert update["used"] == 1240
    written = 100 if model.startswith("anthropic/") else 0  # OpenAI's wire says nothing of writes: it bills none
    split = {"inputTokens": 1200, "cachedReadTokens": 1000, "cacheWriteTokens": written, "outputTokens": 40}
    assert update["_meta"]["coder-agent"]["usage"] == split
