"""The early first call against a server that accepts TCP and never answers (no TLS handshake, no HTTP reply):
the agent stays responsive, the prompt ends with a clear error, and closing stdin still ends the process (and
keeps the prompt).

The server is a real local listener (`tests/support/silent_server.py`); the runtime's import is held until the
test releases it (`held_env`), so the early stage is the one waiting on that server.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from coder_agent.scripted.server import ScriptedModelServer
from tests.support.acp_client import raw_agent
from tests.support.agent_env import EnvFactory, initialize, request
from tests.support.early_stage import EXIT_WITHIN, closed_stdin_exit, held_env, reply_to, start
from tests.support.silent_server import silent_server

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


@pytest.mark.parametrize("scheme", ["https", "http"])
async def test_a_server_that_never_answers_freezes_nothing_and_the_prompt_ends_with_a_clear_error(
    scheme: str, srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path, tmp_path: Path
) -> None:
    """https: the handshake never completes, and the runtime's arrival ends the early stage's wait for it (it
    waited for the request's timeout, 30 s here). http: the request is sent and no reply comes; other input ends
    the early stage's wait. Either way the full agent answers at once and makes the call."""
    with silent_server() as server:
        timeout = "30" if scheme == "https" else "3"  # http: the full agent reads on for a reply that never comes
        overrides = {"CODER_AGENT_API_BASE": server.url(scheme), "CODER_AGENT_REQUEST_TIMEOUT": timeout}
        env, release = held_env(agent_env, tmp_path, CODER_AGENT_MAX_RETRIES="0", **overrides)
        async with raw_agent(env, cwd=workspace) as raw:
            session_id = await start(raw, workspace, "hi")  # initialize and session/new answered early
            await anyio.to_thread.run_sync(server.wait_for, "connection" if scheme == "https" else "request", 30)
            if scheme == "https":
                release.touch()
                started = anyio.current_time()
                await raw.send_json(request(3, "session/list", {}))
            else:
                await raw.send_json(request(3, "session/list", {}))
                release.touch()
                started = anyio.current_time()
            seen: list[dict[str, Any]] = []
            listed = await reply_to(raw, 3, seen)
            answered_in = anyio.current_time() - started
            failed = await reply_to(raw, 2, seen)
    assert [info["sessionId"] for info in listed["result"]["sessions"]] == [session_id]
    assert answered_in < 10, f"session/list answered {answered_in:.1f} s after the runtime was let in"
    message = failed["error"]["message"]
    assert message.startswith(f"Could not reach the model provider at {server.url(scheme)}: "), message
    assert "timed out" in message


@pytest.mark.parametrize("scheme", ["https", "http"])
async def test_closing_stdin_while_the_early_call_waits_on_a_silent_server_ends_the_agent_and_keeps_the_prompt(
    scheme: str, srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path, tmp_path: Path
) -> None:
    with silent_server() as server:
        overrides = {"CODER_AGENT_API_BASE": server.url(scheme), "CODER_AGENT_REQUEST_TIMEOUT": "30"}
        env, _ = held_env(agent_env, tmp_path, **overrides)  # never released
        async with raw_agent(env, cwd=workspace) as raw:
            session_id = await start(raw, workspace, "hi there")
            await anyio.to_thread.run_sync(server.wait_for, "connection" if scheme == "https" else "request", 30)
            elapsed = await closed_stdin_exit(raw)
    assert elapsed < EXIT_WITHIN, f"{elapsed:.2f} s"
    async with raw_agent(agent_env(), cwd=workspace) as raw:  # the prompt is kept, in a turn that was cancelled
        await raw.send_json(initialize(0))
        await raw.send_json(request(1, "session/list", {}))
        listed = (await reply_to(raw, 1, []))["result"]["sessions"]
    assert [(info["sessionId"], info["title"]) for info in listed] == [(session_id, "hi there")]
    assert listed[0]["_meta"]["coder-agent"]["lastTurn"]["stop_reason"] == "cancelled"
