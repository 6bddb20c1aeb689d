"""What a session keeps across close, restore and fork, and the model menu it offers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import PROTOCOL_VERSION, text_block

from coder_agent.config.settings import Settings
from coder_agent.scripted.script import Reply, SleepStep, TextStep
from coder_agent.scripted.server import ScriptedModelServer
from coder_agent.store.sqlite import SqliteSessionStore
from tests.support.inproc import InprocAgent, inproc_agent

pytestmark = pytest.mark.anyio


async def new_session(agent: InprocAgent, cwd: Path, directories: list[str] | None = None) -> str:
    await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
    extra: dict[str, Any] = {"additional_directories": directories} if directories is not None else {}
    session = await agent.conn.new_session(cwd=str(cwd), mcp_servers=[], **extra)
    return session.session_id


def stored(settings: Settings, session_id: str) -> Any:
    store = SqliteSessionStore(settings.home / "sessions.db")
    try:
        return store.get(session_id)
    finally:
        store.close()


async def test_closing_a_session_mid_turn_saves_what_the_turn_changed(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    srv.enqueue(Reply(steps=[TextStep(pieces=["Working"]), SleepStep(seconds=30)]))
    async with inproc_agent(settings) as agent:
        session_id = await new_session(agent, workspace)
        async with anyio.create_task_group() as tg:
            tg.start_soon(agent.conn.prompt, session_id, [text_block("Rename the parser module")])
            await agent.client.wait_for(lambda: "Working" in agent.client.agent_text(session_id), timeout=30)
            await agent.conn.close_session(session_id=session_id)
        record = stored(settings, session_id)
    assert record is not None
    assert record.title == "Rename the parser module"
    assert record.state.get("last_turn", {}).get("stop_reason") == "cancelled"


async def test_a_restored_session_keeps_its_additional_directories(
    settings: Settings, srv: ScriptedModelServer, workspace: Path, tmp_path: Path
) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    async with inproc_agent(settings) as agent:
        session_id = await new_session(agent, workspace, [str(extra)])
    async with inproc_agent(settings) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        fork = await agent.conn.fork_session(session_id=session_id, cwd=str(workspace), mcp_servers=[])
        await agent.conn.resume_session(session_id=session_id, cwd=str(workspace), mcp_servers=[])
        await agent.conn.set_session_mode(session_id=session_id, mode_id="ask")  # saves the session
        await agent.conn.close_session(session_id=session_id)
        listed = {info.session_id: info for info in (await agent.conn.list_sessions()).sessions}
        agent.io.forgive_unstable_fork_result()
    assert listed[session_id].additional_directories == [str(extra)]
    assert fork.session_id in listed
    assert stored(settings, session_id).additional_directories == [str(extra)]


def model_choices(options: list[Any]) -> tuple[str, list[str]]:
    unwrapped = [getattr(option, "root", option) for option in options]
    model = next(option for option in unwrapped if option.id == "model")
    return model.current_value, [choice.value for choice in model.options]


async def test_the_model_menu_keeps_the_configured_model_after_a_switch_and_after_a_load(
    make_settings: Any, srv: ScriptedModelServer, workspace: Path
) -> None:
    settings: Settings = make_settings(models=["openai/other"])
    async with inproc_agent(settings) as agent:
        session_id = await new_session(agent, workspace)
        switched = await agent.conn.set_config_option(config_id="model", session_id=session_id, value="openai/other")
        assert model_choices(switched.config_options) == ("openai/other", ["openai/scripted", "openai/other"])
        back = await agent.conn.set_config_option(config_id="model", session_id=session_id, value="openai/scripted")
        assert model_choices(back.config_options)[0] == "openai/scripted"
        await agent.conn.set_config_option(config_id="model", session_id=session_id, value="openai/other")
    async with inproc_agent(settings) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        loaded = await agent.conn.load_session(session_id=session_id, cwd=str(workspace), mcp_servers=[])
    assert loaded.config_options is not None
    assert model_choices(loaded.config_options) == ("openai/other", ["openai/scripted", "openai/other"])


async def test_a_failed_turn_is_marked_as_such_in_the_store_and_the_list(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    from acp import RequestError

    from coder_agent.scripted.script import HttpErrorStep

    fail = Reply(steps=[HttpErrorStep(status=400, message="bad request body")])
    srv.enqueue(Reply.text("fine"), fail)
    async with inproc_agent(settings) as agent:
        session_id = await new_session(agent, workspace)
        await agent.conn.prompt(session_id=session_id, prompt=[text_block("first")])
        assert stored(settings, session_id).state["last_turn"]["stop_reason"] == "end_turn"
        with pytest.raises(RequestError):
            await agent.conn.prompt(session_id=session_id, prompt=[text_block("second")])
        [info] = (await agent.conn.list_sessions()).sessions
    last_turn = stored(settings, session_id).state["last_turn"]
    assert last_turn["stop_reason"] == "error"
    assert "bad request body" in last_turn["error"]
    assert info.field_meta == {"coder-agent": {"lastTurn": last_turn}}
