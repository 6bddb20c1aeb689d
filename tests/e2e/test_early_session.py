"""`session/new` answered before the runtime is imported, and the session the full agent then takes over.

The agent's interpreter is given a `sitecustomize` that holds the import of `coder_agent.server.assembly` (the
runtime) until the test creates a file: whatever is answered meanwhile was answered by the early reader.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import anyio
import pytest

from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.acp_client import raw_agent
from tests.support.agent_env import FIRST_PROMPT_TIMEOUT, EnvFactory, initialize, request
from tests.support.early_stage import held_env, reply_to

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


async def test_session_new_is_answered_before_the_runtime_and_the_agent_takes_the_session_over(
    srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path, tmp_path: Path
) -> None:
    env, release = held_env(
        agent_env, tmp_path, CODER_AGENT_DEFAULT_MODE="plan", CODER_AGENT_MODELS="openai/other, openai/scripted"
    )
    srv.enqueue(Reply.text("Early ", "bird"))
    seen: list[dict[str, Any]] = []
    async with raw_agent(env, cwd=workspace) as raw:
        await raw.send_json(initialize(0))
        assert (await reply_to(raw, 0, seen))["result"]["protocolVersion"] == 1
        await raw.send_json(request(1, "session/new", {"cwd": str(workspace), "mcpServers": []}))
        early = (await reply_to(raw, 1, seen))["result"]  # while the runtime's import is held
        session_id = early["sessionId"]
        release.touch()
        await raw.send_json(request(2, "session/list", {}))
        listed = (await reply_to(raw, 2, seen))["result"]["sessions"]
        await raw.send_json(request(3, "session/new", {"cwd": str(workspace), "mcpServers": []}))
        full = (await reply_to(raw, 3, seen))["result"]  # the full agent's answer, for the same settings
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
        await raw.send_json(request(4, "session/prompt", prompt))
        done = (await reply_to(raw, 4, seen))["result"]
    assert seen == [] or seen[0]["method"] == "session/update"
    assert early["modes"]["currentModeId"] == "plan"
    assert [o["value"] for o in early["configOptions"][1]["options"]] == ["openai/scripted", "openai/other"]
    assert {k: v for k, v in early.items() if k != "sessionId"} == {k: v for k, v in full.items() if k != "sessionId"}
    assert session_id in [info["sessionId"] for info in listed]  # the full agent saved it
    commands = [m for m in seen if m["params"]["update"]["sessionUpdate"] == "available_commands_update"]
    assert [m["params"]["sessionId"] for m in commands][:1] == [session_id]  # sent after the early reply
    assert done["stopReason"] == "end_turn"
    chunks = [m["params"]["update"] for m in seen if m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"]
    assert "".join(chunk["content"]["text"] for chunk in chunks) == "Early bird"
    log = (tmp_path / "home" / "logs" / "coder-agent.log").read_text(encoding="utf-8")
    assert f"took over {session_id}, made by the early session/new" in log


async def test_the_slash_commands_are_announced_with_the_early_session_before_the_runtime_is_in(
    srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path, tmp_path: Path
) -> None:
    """Before: the commands waited for the runtime (0.8-4.3 s), and a `/` typed at once showed only the client's.
    The built-ins, the user's and the project's come with the session; the runtime sends them again only if its
    list differs (MCP prompts, later)."""
    env, release = held_env(agent_env, tmp_path)
    user = tmp_path / "config" / "coder-agent" / "commands"
    user.mkdir(parents=True)
    (user / "standup.md").write_text("---\ndescription: Write my standup\n---\nSum up $ARGUMENTS\n")
    project = workspace / ".coder-agent" / "commands"
    project.mkdir(parents=True)
    (project / "deploy.md").write_text("Deploy the app to staging.\n")
    srv.enqueue(Reply.text("ok"))
    seen: list[dict[str, Any]] = []
    async with raw_agent(env, cwd=workspace) as raw:
        await raw.send_json(initialize(0))
        await reply_to(raw, 0, seen)
        await raw.send_json(request(1, "session/new", {"cwd": str(workspace), "mcpServers": []}))
        session_id = (await reply_to(raw, 1, seen))["result"]["sessionId"]
        announced = await raw.read_message(FIRST_PROMPT_TIMEOUT)  # the runtime's import is still held
        release.touch()
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
        await raw.send_json(request(2, "session/prompt", prompt))
        await reply_to(raw, 2, seen)
    assert announced["params"]["sessionId"] == session_id
    update = announced["params"]["update"]
    assert update["sessionUpdate"] == "available_commands_update"
    names = {command["name"]: command for command in update["availableCommands"]}
    assert list(names) == ["compact", "init", "review", "undo", "rewind", "standup", "deploy"]
    assert names["standup"] == {
        "name": "standup",
        "description": "Write my standup (user)",
        "input": {"hint": "arguments"},
    }
    assert names["deploy"]["description"] == "Deploy the app to staging. (project)"
    again = [
        m for m in seen if m.get("params", {}).get("update", {}).get("sessionUpdate") == "available_commands_update"
    ]
    assert again == []  # the runtime's list is the same: not sent twice


async def test_a_session_new_the_early_reader_cannot_answer_exactly_waits_for_the_full_agent(
    srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path, tmp_path: Path
) -> None:
    env, release = held_env(agent_env, tmp_path)
    async with raw_agent(env, cwd=workspace) as raw:
        await raw.send_json(initialize(0))
        await raw.read_message(FIRST_PROMPT_TIMEOUT)
        await raw.send_json(request(1, "session/new", {"cwd": "relative/path", "mcpServers": []}))
        with pytest.raises(TimeoutError):
            with anyio.fail_after(1):  # held: nobody answers it
                await raw.read_message(FIRST_PROMPT_TIMEOUT)
        release.touch()
        reply = await raw.read_message(FIRST_PROMPT_TIMEOUT)
    assert reply["id"] == 1
    assert reply["error"]["code"] == -32602
    assert "cwd must be an absolute path" in reply["error"]["message"]


async def test_ctrl_c_while_the_runtime_is_imported_ends_the_agent_quietly(
    agent_env: EnvFactory, workspace: Path, tmp_path: Path
) -> None:
    env, _ = held_env(agent_env, tmp_path)  # never released: the agent is between `initialize` and the runtime
    async with raw_agent(env, cwd=workspace) as raw:
        await raw.send_json(initialize(0))
        await raw.read_message(FIRST_PROMPT_TIMEOUT)
        raw.proc.send_signal(signal.SIGINT)
        code = await raw.wait_exit(timeout=10)
        stderr = raw.stderr_text()
    assert code == 0
    assert "Traceback" not in stderr
