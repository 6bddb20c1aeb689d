"""litellm is imported in a quiet moment, not while the user waits on the first reply."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import PROTOCOL_VERSION, text_block

from coder_agent.config.settings import Settings
from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer
from coder_agent.server import session_handlers
from tests.support.inproc import inproc_agent

pytestmark = pytest.mark.anyio


async def test_a_prompt_right_after_session_new_runs_before_litellm_is_imported(
    settings: Settings, srv: ScriptedModelServer, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(session_handlers, "LITELLM_AFTER_IDLE", 0.2)
    monkeypatch.setattr(session_handlers, "LITELLM_AFTER_TURN", 0.2)
    imported: list[float] = []
    done = anyio.Event()

    async def load() -> Any:
        imported.append(anyio.current_time())
        done.set()

    monkeypatch.setattr(session_handlers, "load_litellm", load)
    srv.enqueue(Reply.stall(0.5, then_text=["late ", "reply"]))
    async with inproc_agent(settings) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
        response = await agent.conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        ended = anyio.current_time()
        with anyio.fail_after(10):
            await done.wait()
    assert response.stop_reason == "end_turn"
    # the turn outlasted LITELLM_AFTER_IDLE: still no import until it ended
    assert imported and imported[0] >= ended + 0.15
