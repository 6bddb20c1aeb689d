"""litellm for the long tail only: a session whose model only litellm speaks starts importing it at `session/new`,
before the first prompt (the user's typing hides its seconds); a session on a wire the agent speaks never imports
it, through a whole turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.acp_client import RawAgent, raw_agent
from tests.support.agent_env import FIRST_PROMPT_TIMEOUT, EnvFactory, initialize, request
from tests.support.early_stage import chunks, reply_to

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

IMPORTED = "litellm imported"  # what `llm.loader` logs once it has imported litellm


async def until_logged(raw: RawAgent, words: str) -> None:
    """The agent's stderr holds `words` (its log, at DEBUG): polled, as a file gives no event, within the bound."""
    with anyio.fail_after(FIRST_PROMPT_TIMEOUT):
        while words not in raw.stderr_text():  # noqa: ASYNC110 (another process's log file sets no event)
            await anyio.sleep(0.05)


async def new_session(raw: RawAgent, workspace: Path, seen: list[dict[str, Any]]) -> str:
    await raw.send_json(initialize(0))
    await reply_to(raw, 0, seen)
    await raw.send_json(request(1, "session/new", {"cwd": str(workspace), "mcpServers": []}))
    return str((await reply_to(raw, 1, seen))["result"]["sessionId"])


async def prompt(raw: RawAgent, session_id: str, seen: list[dict[str, Any]]) -> dict[str, Any]:
    params = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
    await raw.send_json(request(2, "session/prompt", params))
    return await reply_to(raw, 2, seen)


async def test_a_long_tail_model_imports_litellm_at_session_new(
    srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path
) -> None:
    srv.enqueue(Reply.text("via ", "litellm"))
    env = agent_env(CODER_AGENT_MODEL="custom_openai/scripted", CODER_AGENT_LOG_LEVEL="DEBUG")
    seen: list[dict[str, Any]] = []
    async with raw_agent(env, cwd=workspace, timeout=FIRST_PROMPT_TIMEOUT * 2) as raw:
        session_id = await new_session(raw, workspace, seen)
        await until_logged(raw, IMPORTED)  # no prompt was sent: the import started with the session
        assert srv.requests == []
        done = await prompt(raw, session_id, seen)
    assert done["result"]["stopReason"] == "end_turn"
    assert "".join(c["content"]["text"] for c in chunks(seen)) == "via litellm"
    assert srv.requests[0].headers["user-agent"].split("/")[0] in ("AsyncOpenAI", "litellm")


async def test_a_model_the_agent_speaks_never_imports_litellm(
    srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path
) -> None:
    srv.enqueue(Reply.text("own ", "adapter"), Reply.text("again"))
    env = agent_env(CODER_AGENT_LOG_LEVEL="DEBUG")
    seen: list[dict[str, Any]] = []
    async with raw_agent(env, cwd=workspace, timeout=FIRST_PROMPT_TIMEOUT * 2) as raw:
        session_id = await new_session(raw, workspace, seen)
        await prompt(raw, session_id, seen)  # may be answered before the runtime is in: a second, by it
        params = {"sessionId": session_id, "prompt": [{"type": "text", "text": "again"}]}
        await raw.send_json(request(3, "session/prompt", params))
        done = await reply_to(raw, 3, seen)
        await raw.close_stdin()
        await raw.wait_exit(10)
        log = raw.stderr_text()
    assert done["result"]["stopReason"] == "end_turn"
    assert "took over" in log or "session" in log  # the log is there (DEBUG): what it lacks is meaningful
    assert IMPORTED not in log and "litellm" not in log.lower()
