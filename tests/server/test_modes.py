"""Modes and permissions: who asks, what is remembered, what is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import PROTOCOL_VERSION
from acp.schema import ConfigOptionUpdate, CurrentModeUpdate

from coder_agent.config.settings import Settings
from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.driving import BackgroundPrompt, model_saw, updates
from tests.support.inproc import inproc_agent
from tests.support.recording_client import PermissionRequest, RecordingClient
from tests.support.server_helpers import Run, session

pytestmark = pytest.mark.anyio

MODES = ["ask", "default", "accept-edits", "plan", "bypass"]


def write(path: str, content: str = "new\n") -> Reply:
    return Reply.tool_calls([tool_call("write_file", {"path": path, "content": content})])


def run(command: str) -> Reply:
    return Reply.tool_calls([tool_call("run_command", {"command": command})])


async def test_session_new_offers_the_modes_both_ways_and_switching_keeps_them_in_sync(
    settings: Settings, workspace: Path
) -> None:
    async with session("bare", settings, workspace) as run_:
        messages = run_.agent.messages
        [new] = [m["result"] for m in messages if isinstance(m.get("result"), dict) and "sessionId" in m["result"]]
        assert new["modes"]["currentModeId"] == "default"
        assert [m["id"] for m in new["modes"]["availableModes"]] == MODES
        [mode_option] = [o for o in new["configOptions"] if o["category"] == "mode"]
        assert mode_option["currentValue"] == "default"
        assert [o["value"] for o in mode_option["options"]] == MODES
        await run_.set_mode("plan")
        with anyio.fail_after(10):
            response = await run_.agent.conn.set_config_option(
                session_id=run_.session_id, config_id="mode", value="accept-edits"
            )
        await run_.client.wait_for(lambda: len(updates(run_.agent, run_.session_id, "current_mode_update")) >= 2)
        announced = [u["currentModeId"] for u in updates(run_.agent, run_.session_id, "current_mode_update")]
        config_updates = updates(run_.agent, run_.session_id, "config_option_update")
    assert [o["currentValue"] for o in response.model_dump(by_alias=True)["configOptions"] if o["id"] == "mode"] == [
        "accept-edits"
    ]
    assert announced == ["plan", "accept-edits"]
    assert [next(o["currentValue"] for o in u["configOptions"] if o["id"] == "mode") for u in config_updates] == [
        "plan",
        "accept-edits",
    ]
    assert CurrentModeUpdate and ConfigOptionUpdate  # the SDK parsed both kinds


async def test_an_unknown_mode_is_invalid_params(settings: Settings, workspace: Path) -> None:
    async with session("bare", settings, workspace) as run_:
        with pytest.raises(Exception) as error, anyio.fail_after(10):
            await run_.set_mode("yolo")
    assert getattr(error.value, "code", None) == -32602


@pytest.mark.parametrize(
    ("mode", "asked", "written"),
    [
        ("ask", True, True),
        ("default", True, True),
        ("accept-edits", False, True),
        ("plan", False, False),
        ("bypass", False, True),
    ],
)
async def test_each_mode_decides_whether_an_edit_asks(
    mode: str, asked: bool, written: bool, srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    srv.enqueue(write("f.txt"), Reply.text("ok"))
    async with session("bare", settings, workspace, mode=mode) as run_:
        assert await run_.prompt("write") == "end_turn"
        [call] = run_.tool_calls().values()
    assert bool(run_.client.permission_requests) == asked
    assert (workspace / "f.txt").exists() == written
    assert call["statuses"][-1] == ("completed" if written else "failed")
    if mode == "plan":
        assert "Plan mode is read-only" in model_saw(srv.requests[1].body)


async def test_accept_edits_still_asks_before_a_command(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    srv.enqueue(run("echo hi"), Reply.text("ok"))
    async with session("bare", settings, workspace, mode="accept-edits") as run_:
        assert await run_.prompt("run") == "end_turn"
    [request] = run_.client.permission_requests
    assert request.tool_call.title == "echo hi" and request.tool_call.kind == "execute"


async def test_always_allow_is_remembered_per_command_prefix_but_ask_mode_asks_anyway(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    srv.enqueue(run("git status"), run("git status --short"), run("git log -1"), Reply.text("ok"))
    async with session("bare", settings, workspace, permission="allow_always") as run_:
        assert await run_.prompt("go") == "end_turn"
        asked = [r.tool_call.title for r in run_.client.permission_requests]
        srv.enqueue(run("git status -s"), Reply.text("ok"))
        await run_.set_mode("ask")
        assert await run_.prompt("again") == "end_turn"
        asked_in_ask_mode = [r.tool_call.title for r in run_.client.permission_requests][len(asked) :]
    assert asked == ["git status", "git log -1"]  # `git status --short` matched the remembered prefix
    assert asked_in_ask_mode == ["git status -s"]


@pytest.mark.parametrize("answer", ["reject_once", "reject_always", "cancelled"])
async def test_a_refusal_goes_back_to_the_model_and_nothing_is_written(
    answer: str, srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    srv.enqueue(write("f.txt"), Reply.text("understood"))
    async with session("bare", settings, workspace, permission=answer) as run_:  # type: ignore[arg-type]
        assert await run_.prompt("write") == "end_turn"
        [call] = run_.tool_calls().values()
    assert not (workspace / "f.txt").exists()
    assert call["statuses"][-1] == "failed"
    assert "Refused" in model_saw(srv.requests[1].body)


async def test_a_write_outside_the_roots_asks_even_in_accept_edits_and_after_always(
    srv: ScriptedModelServer, settings: Settings, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    srv.enqueue(write("inside.txt"), write(str(outside)), write("inside2.txt"), Reply.text("ok"))

    def policy(request: PermissionRequest) -> str:
        return "allow_always"

    async with session("bare", settings, workspace, permission=policy) as run_:
        assert await run_.prompt("write") == "end_turn"
    titles = [r.tool_call.title for r in run_.client.permission_requests]
    assert len(titles) == 2 and "outside" in titles[1]  # inside2 was remembered; outside asked anyway
    assert outside.read_text() == "new\n"

    srv.enqueue(write(str(tmp_path / "outside2.txt")), Reply.text("ok"))
    async with session("bare", settings, workspace, mode="accept-edits") as run_:
        assert await run_.prompt("write") == "end_turn"
    assert len(run_.client.permission_requests) == 1


async def test_additional_directories_are_inside_the_roots(
    srv: ScriptedModelServer, settings: Settings, workspace: Path, tmp_path: Path
) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    srv.enqueue(write(str(extra / "x.txt")), Reply.text("ok"))
    async with session("bare", settings, workspace, mode="accept-edits", directories=[str(extra)]) as run_:
        assert await run_.prompt("write") == "end_turn"
    assert not run_.client.permission_requests
    assert (extra / "x.txt").exists()


class HoldingClient(RecordingClient):
    """Holds each permission request open until told; then answers `cancelled`, as editors do after a cancel."""

    def __init__(self) -> None:
        super().__init__("allow_once")
        self.asked = anyio.Event()
        self.release = anyio.Event()

    async def request_permission(self, session_id: str, tool_call: Any, options: Any, **kwargs: Any) -> Any:
        self.asked.set()
        await self.release.wait()
        self.permission = "cancelled"
        return await super().request_permission(session_id, tool_call, options, **kwargs)


async def test_a_cancel_during_a_permission_prompt_withdraws_it_and_the_turn_ends_cancelled(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    srv.enqueue(write("f.txt"), Reply.text("never used"))
    client = HoldingClient()
    async with inproc_agent(settings, client) as agent:
        with anyio.fail_after(20):
            await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
            new = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
        prompt = BackgroundPrompt(agent, new.session_id, "write it")
        async with anyio.create_task_group() as tg:
            tg.start_soon(prompt.run)
            with anyio.fail_after(30):
                await client.asked.wait()
            await agent.conn.cancel(session_id=new.session_id)
            response = await prompt.result(10)
            client.release.set()
        run_ = Run(agent, client, new.session_id)
        [call] = run_.tool_calls().values()
        withdrawn = [m for m in agent.messages if m.get("method") == "$/cancel_request"]
    assert response.stop_reason == "cancelled"
    assert call["statuses"][-1] == "failed"
    assert not (workspace / "f.txt").exists()
    [permission] = [m for m in agent.messages if m.get("method") == "session/request_permission"]
    assert [m["params"]["requestId"] for m in withdrawn] == [permission["id"]]
    assert len(srv.requests) == 1  # the model was not called again
