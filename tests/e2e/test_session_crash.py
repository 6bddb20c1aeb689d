"""Sessions outlive `kill -9` of the agent: mid-turn, and during a permission prompt.

`killed` runs one scenario for several tests: a first agent completes a turn, streams part of a second
reply and is killed with SIGKILL; a second agent on the same CODER_AGENT_HOME loads the session and prompts.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import PROTOCOL_VERSION
from acp.schema import DeniedOutcome, PermissionOption, RequestPermissionResponse, ToolCallUpdate

from coder_agent.scripted.records import RecordedRequest
from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.acp_client import PermissionRequest, RecordingClient, SpawnedAgent, spawn_agent
from tests.support.agent_env import FIRST_PROMPT_TIMEOUT, EnvFactory, scripted_env
from tests.support.driving import (
    USER_CHUNK,
    BackgroundPrompt,
    conversation,
    kinds,
    open_session,
    prompt,
    reply_positions,
    session_updates,
    spoken,
)

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

PLAN = {"entries": [{"content": "Answer the question", "status": "in_progress"}]}


@dataclass(frozen=True)
class KilledMidTurn:
    session_id: str
    first_turn: list[dict[str, Any]]  # the updates shown for the completed first turn
    second_turn: list[dict[str, Any]]  # and for the second one, up to the kill
    replayed: list[dict[str, Any]]  # what the new agent sent for the session before its session/load reply
    recorded_before: list[Any]  # what the first recording client made of the updates it got (SDK models)
    recorded_after: list[Any]  # and the second one, from the replay on
    follow_up_stop: str
    follow_up_request: RecordedRequest


def history(updates: list[Any]) -> list[Any]:
    """The updates a session's record keeps: not the commands, sent live only (after the session/new reply, before
    the session/load reply)."""
    kind = "available_commands_update"
    return [u for u in updates if (u.get("sessionUpdate") if isinstance(u, dict) else u.session_update) != kind]


async def kill(agent: SpawnedAgent) -> None:
    os.kill(agent.proc.pid, signal.SIGKILL)
    with anyio.fail_after(10):
        assert await agent.proc.wait() == -signal.SIGKILL


async def kill_mid_turn(srv: ScriptedModelServer, home: Path, workspace: Path) -> KilledMidTurn:
    env = scripted_env(srv.url, home)
    srv.enqueue(
        Reply.tool_calls([tool_call("todo_write", PLAN)]),
        Reply.thinking_then_text(["Thinking ", "hard."], ["Answer ", "one."]),
        Reply.stall(60, after_text=["Partial ", "answer"]),
    )
    async with spawn_agent(env, cwd=workspace) as first, anyio.create_task_group() as tasks:
        with anyio.fail_after(FIRST_PROMPT_TIMEOUT):
            session_id = await open_session(first, workspace)
            await prompt(first, session_id, "one")
            first_turn = history(session_updates(first.messages, session_id))
            tasks.start_soon(BackgroundPrompt(first, session_id, "two").run)
            await first.client.wait_for(lambda: first.client.agent_text(session_id).endswith("Partial answer"), 30)
        await kill(first)
        tasks.cancel_scope.cancel()
    shown = history(session_updates(first.messages, session_id))
    assert len(shown) == len(history(first.client.updates(session_id)))

    srv.enqueue(Reply.text("Answer ", "three."))
    async with spawn_agent(env, cwd=workspace) as second:
        with anyio.fail_after(FIRST_PROMPT_TIMEOUT):
            await second.conn.initialize(protocol_version=PROTOCOL_VERSION)
            await second.conn.load_session(session_id=session_id, cwd=str(workspace), mcp_servers=[])
            loaded_at = reply_positions(second)[-1]
            stop = await prompt(second, session_id, "three")
    replayed = session_updates(second.messages[:loaded_at], session_id)
    recorded = (history(first.client.updates(session_id)), history(second.client.updates(session_id)))
    return KilledMidTurn(session_id, first_turn, shown[len(first_turn) :], replayed, *recorded, stop, srv.requests[-1])


@pytest.fixture(scope="module")
def killed(tmp_path_factory: pytest.TempPathFactory) -> KilledMidTurn:
    root = tmp_path_factory.mktemp("killed")
    (root / "workspace").mkdir()
    with ScriptedModelServer() as srv:
        return anyio.run(kill_mid_turn, srv, root / "home", root / "workspace")


def test_load_after_a_kill_replays_every_update_shown_before_it_in_order_before_the_load_reply(
    killed: KilledMidTurn,
) -> None:
    assert [u["content"]["text"] for u in killed.second_turn if u["sessionUpdate"] == "agent_message_chunk"] == [
        "Partial ",
        "answer",
    ]
    users = [u for u in killed.replayed if u["sessionUpdate"] == USER_CHUNK]
    assert [u["content"]["text"] for u in users] == ["one", "two"]  # the prompts, which the client sent itself
    expected = [users[0], *killed.first_turn, users[1], *killed.second_turn]
    assert killed.replayed[: len(expected)] == expected
    # After the history, the session's state as it is now, and its commands; nothing else.
    assert kinds(killed.replayed[len(expected) :]) == [
        "current_mode_update",
        "config_option_update",
        "available_commands_update",
    ]
    # The recording clients agree: what the editor showed before the kill is what it is shown again.
    replayed_models = [u for u in killed.recorded_after if u.session_update != USER_CHUNK]
    assert replayed_models[: len(killed.recorded_before)] == killed.recorded_before


def test_after_a_kill_the_loaded_session_takes_a_prompt_with_the_earlier_exchange_in_context(
    killed: KilledMidTurn,
) -> None:
    assert killed.follow_up_stop == "end_turn"
    said = spoken(killed.follow_up_request)
    assert said[:3] == [("user", "one"), ("assistant", "Answer one."), ("user", "two")]
    assert said[-1] == ("user", "three")
    assert [role for role, _ in conversation(killed.follow_up_request)[:3]] == ["user", "assistant", "tool"]


def test_after_a_kill_the_model_knows_the_partial_reply_the_user_was_shown(killed: KilledMidTurn) -> None:
    assert spoken(killed.follow_up_request)[2:] == [("user", "two"), ("assistant", "Partial answer"), ("user", "three")]


class UndecidedClient(RecordingClient):
    """Asked for permission, the user is still deciding (until `release` is set)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = anyio.Event()

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.permission_requests.append(PermissionRequest(session_id, tool_call, list(options)))
        self._notify()
        await self.release.wait()
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))


async def test_after_a_kill_during_a_permission_prompt_every_tool_call_in_history_has_its_answer(
    srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path
) -> None:
    write = tool_call("write_file", {"path": str(workspace / "notes.txt"), "content": "hi"}, id="call_w")
    srv.enqueue(Reply.tool_calls([write]), Reply.text("Understood"))
    client = UndecidedClient()
    async with spawn_agent(agent_env(), cwd=workspace, client=client) as first, anyio.create_task_group() as tasks:
        with anyio.fail_after(FIRST_PROMPT_TIMEOUT):
            session_id = await open_session(first, workspace)
            tasks.start_soon(BackgroundPrompt(first, session_id, "write the notes").run)
            await client.wait_for(lambda: bool(client.permission_requests), 30)
        await kill(first)
        client.release.set()
        tasks.cancel_scope.cancel()
    async with spawn_agent(agent_env(), cwd=workspace) as second:
        with anyio.fail_after(FIRST_PROMPT_TIMEOUT):
            await second.conn.initialize(protocol_version=PROTOCOL_VERSION)
            await second.conn.load_session(session_id=session_id, cwd=str(workspace), mcp_servers=[])
            assert await prompt(second, session_id, "never mind") == "end_turn"
    messages = srv.requests[-1].body["messages"]
    asked = [call["id"] for m in messages if m["role"] == "assistant" for call in m.get("tool_calls") or []]
    answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    assert asked == ["call_w"]
    assert answered == asked, "OpenAI-style APIs answer HTTP 400 to a tool call without its result"
