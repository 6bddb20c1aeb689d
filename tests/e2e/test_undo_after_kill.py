"""Undo after `kill -9`: the agent killed while the model thinks after a command changed files (none tracked by
git, one a 600 secret), then `/undo` in a new agent that loaded the session, or `coder-agent sessions undo` from a
shell (the dead agent holds the session no more), puts every file back as it was, mode included."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from acp import PROTOCOL_VERSION

from coder_agent.scripted.script import Reply, ToolCallStep
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.acp_client import SpawnedAgent, spawn_agent
from tests.support.agent_env import FIRST_PROMPT_TIMEOUT, REPO_ROOT, EnvFactory
from tests.support.driving import BackgroundPrompt, open_session, prompt

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

COMMAND = "sed -i s/alpha/ALPHA/ notes.txt && rm secret && printf 'new\\n' > made.txt"


def lay_out(workspace: Path) -> None:
    (workspace / "notes.txt").write_text("alpha\n")
    (workspace / "secret").write_text("token\n")
    os.chmod(workspace / "secret", 0o600)


def as_before(workspace: Path) -> bool:
    secret = workspace / "secret"
    return (
        (workspace / "notes.txt").read_text() == "alpha\n"
        and not (workspace / "made.txt").exists()
        and secret.read_text() == "token\n"
        and stat.S_IMODE(secret.stat().st_mode) == 0o600
    )


async def killed_while_thinking(srv: ScriptedModelServer, env: dict[str, str], workspace: Path) -> str:
    call = ToolCallStep(name="run_command", id="c1", arguments=json.dumps({"command": COMMAND}))
    srv.enqueue(Reply.tool_calls([call]), Reply.stall(60, after_text=["Thinking about it"]))
    async with spawn_agent(env, cwd=workspace) as first, anyio.create_task_group() as tasks:
        with anyio.fail_after(FIRST_PROMPT_TIMEOUT):
            session_id = await open_session(first, workspace)
            tasks.start_soon(BackgroundPrompt(first, session_id, "change them").run)
            await first.client.wait_for(lambda: first.client.agent_text(session_id).endswith("about it"), 40)
        await kill(first)
        tasks.cancel_scope.cancel()
    assert (workspace / "made.txt").exists() and not (workspace / "secret").exists()
    return session_id


async def kill(agent: SpawnedAgent) -> None:
    os.kill(agent.proc.pid, signal.SIGKILL)
    with anyio.fail_after(10):
        assert await agent.proc.wait() == -signal.SIGKILL


async def test_undo_in_an_agent_that_loaded_the_session_after_a_kill_puts_every_file_back(
    srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path
) -> None:
    lay_out(workspace)
    env = agent_env(CODER_AGENT_DEFAULT_MODE="bypass")
    session_id = await killed_while_thinking(srv, env, workspace)
    async with spawn_agent(env, cwd=workspace) as second:
        with anyio.fail_after(FIRST_PROMPT_TIMEOUT):
            await second.conn.initialize(protocol_version=PROTOCOL_VERSION)
            await second.conn.load_session(session_id=session_id, cwd=str(workspace), mcp_servers=[])
            assert await prompt(second, session_id, "/undo") == "end_turn"
            assert "restored" in second.client.agent_text(session_id)
    assert as_before(workspace)


async def test_sessions_undo_from_a_shell_after_a_kill_puts_every_file_back(
    srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path, tmp_path: Path
) -> None:
    lay_out(workspace)
    env = agent_env(CODER_AGENT_DEFAULT_MODE="bypass")
    session_id = await killed_while_thinking(srv, env, workspace)
    cli = [sys.executable, "-m", "coder_agent", "sessions", "undo", session_id]
    environment = {**os.environ, **env}
    done = await anyio.to_thread.run_sync(
        lambda: subprocess.run(cli, env=environment, cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    )
    assert done.returncode == 0, done.stderr
    assert f"restored  {workspace / 'notes.txt'}" in done.stdout
    assert as_before(workspace)
