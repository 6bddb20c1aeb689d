"""Permission answers kept for the project or for all projects, in the user's rules.toml, used by later sessions."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, text_block

from coder_agent.config.settings import Settings
from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.inproc import inproc_agent
from tests.support.recording_client import PermissionRequest, RecordingClient

pytestmark = pytest.mark.anyio


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return tmp_path / "config"


@pytest.fixture
def projects(tmp_path: Path) -> tuple[Path, Path]:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    return one, two


def choose(option_id: str) -> Callable[[PermissionRequest], str]:
    def pick(request: PermissionRequest) -> str:
        assert option_id in [option.option_id for option in request.options]
        return option_id

    return pick


async def run_command(
    settings: Settings, srv: ScriptedModelServer, cwd: Path, command: str, client: RecordingClient
) -> str:
    """One prompt in a new session at `cwd` whose model runs `command`; what the model was told of it."""
    srv.enqueue(Reply.tool_calls([tool_call("run_command", {"command": command})]), Reply.text("Done."))
    async with inproc_agent(settings, client) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        new = await agent.conn.new_session(cwd=str(cwd), mcp_servers=[])
        done = await agent.conn.prompt(session_id=new.session_id, prompt=[text_block("go")])
    assert done.stop_reason == "end_turn"
    [answer] = [m["content"] for m in srv.requests[-1].body["messages"] if m["role"] == "tool"]
    return str(answer)


def write_rules(config: Path, text: str) -> None:
    config.mkdir()
    (config / "rules.toml").write_text(text)


def rules_in(config: Path) -> list[dict[str, Any]]:
    return list(tomllib.loads((config / "rules.toml").read_text())["rule"])


async def test_the_options_say_their_scope_and_have_distinct_ids(
    make_settings: Any, srv: ScriptedModelServer, config: Path, projects: tuple[Path, Path]
) -> None:
    client = RecordingClient("reject_once")
    await run_command(make_settings(config_dir=config), srv, projects[0], "npm test", client)
    [asked] = client.permission_requests
    names = {option.option_id: (option.name, option.kind) for option in asked.options}
    assert len(names) == len(asked.options) == 3  # what people choose: not six or eight options to read
    assert names["allow_always_project"] == ("Always allow `npm test` commands in this project", "allow_always")
    assert names["allow_once"] == ("Allow", "allow_once") and names["reject_once"] == ("Reject", "reject_once")


async def test_without_a_config_folder_only_the_session_can_remember(
    settings: Settings, srv: ScriptedModelServer, projects: tuple[Path, Path]
) -> None:
    client = RecordingClient("reject_once")
    await run_command(settings, srv, projects[0], "npm test", client)
    [asked] = client.permission_requests
    assert [option.option_id for option in asked.options] == ["allow_once", "allow_always", "reject_once"]


async def test_always_allow_in_this_project_is_kept_for_later_sessions_of_that_project_only(
    make_settings: Any, srv: ScriptedModelServer, config: Path, projects: tuple[Path, Path]
) -> None:
    one, two = projects
    settings = make_settings(config_dir=config)
    first = RecordingClient(choose("allow_always_project"))
    assert "hello" in await run_command(settings, srv, one, "echo hello", first)
    rule = {"action": "allow", "tool": "run_command", "command": "echo hello", "project": str(one)}
    assert rules_in(config) == [rule]

    later = RecordingClient("reject_once")  # a later session (a new agent) in the same project: not asked
    assert "hello again" in await run_command(settings, srv, one, "echo hello again", later)
    assert later.permission_requests == []

    elsewhere = RecordingClient("reject_once")
    assert "rejected" in await run_command(settings, srv, two, "echo hello there", elsewhere)
    assert len(elsewhere.permission_requests) == 1


async def test_a_rule_for_all_projects_holds_in_another_project_but_not_for_chained_commands(
    make_settings: Any, srv: ScriptedModelServer, config: Path, projects: tuple[Path, Path]
) -> None:
    """Rules for all projects (and rejects) are written by hand: the editor offers what people choose."""
    _, two = projects
    write_rules(config, "[[rule]]\naction = 'allow'\ntool = 'run_command'\ncommand = 'echo hello'\n")
    settings = make_settings(config_dir=config)
    later = RecordingClient("reject_once")
    assert "hello second" in await run_command(settings, srv, two, "echo hello second", later)
    assert later.permission_requests == []
    chained = RecordingClient("reject_once")
    await run_command(settings, srv, two, "echo hello; echo chained", chained)
    assert len(chained.permission_requests) == 1


async def test_a_reject_rule_for_the_project_refuses_without_asking(
    make_settings: Any, srv: ScriptedModelServer, config: Path, projects: tuple[Path, Path]
) -> None:
    one, _ = projects
    rule = f"[[rule]]\naction = 'reject'\ntool = 'run_command'\ncommand = 'git push'\nproject = '{one}'\n"
    write_rules(config, rule)
    settings = make_settings(config_dir=config)
    later = RecordingClient("allow_once")
    told = await run_command(settings, srv, one, "git push origin main", later)
    assert later.permission_requests == [] and "always reject" in told


async def test_hand_written_rules_path_globs_and_a_project_reject_before_a_global_allow(
    make_settings: Any, srv: ScriptedModelServer, config: Path, projects: tuple[Path, Path]
) -> None:
    one, _ = projects
    write_rules(
        config,
        "[[rule]]\naction = 'allow'\ntool = 'write_file'\npath = 'docs/**'\n\n"
        "[[rule]]\naction = 'allow'\ntool = 'run_command'\ncommand = 'make'\n\n"
        f"[[rule]]\naction = 'reject'\ntool = 'run_command'\ncommand = 'make deploy'\nproject = '{one}'\n",
    )
    settings = make_settings(config_dir=config)
    docs = one / "docs" / "guide" / "a.md"
    srv.enqueue(
        Reply.tool_calls([tool_call("write_file", {"path": str(docs), "content": "x\n"})]),
        Reply.tool_calls([tool_call("write_file", {"path": str(one / "src.py"), "content": "y\n"})]),
        Reply.text("Done."),
    )
    client = RecordingClient("reject_once")
    async with inproc_agent(settings, client) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        new = await agent.conn.new_session(cwd=str(one), mcp_servers=[])
        await agent.conn.prompt(session_id=new.session_id, prompt=[text_block("go")])
    assert docs.read_text() == "x\n"
    assert [request.tool_call.title for request in client.permission_requests] == ["Create src.py"]
    assert not (one / "src.py").exists()
    assert "always reject" in await run_command(settings, srv, one, "make deploy", RecordingClient("allow_once"))


async def test_a_rules_file_that_cannot_be_read_gives_no_rules(
    make_settings: Any, srv: ScriptedModelServer, config: Path, projects: tuple[Path, Path]
) -> None:
    write_rules(config, "[[rule]\naction = 'allow'\ntool = 'run_command'\n")  # broken TOML
    client = RecordingClient("reject_once")
    await run_command(make_settings(config_dir=config), srv, projects[0], "echo hi", client)
    assert len(client.permission_requests) == 1


async def test_writes_outside_the_project_ask_whatever_the_rules_say(
    make_settings: Any, srv: ScriptedModelServer, config: Path, projects: tuple[Path, Path]
) -> None:
    one, two = projects
    write_rules(config, "[[rule]]\naction = 'allow'\ntool = 'write_file'\n")
    srv.enqueue(
        Reply.tool_calls([tool_call("write_file", {"path": str(two / "x.txt"), "content": "x"})]), Reply.text("ok")
    )
    client = RecordingClient("reject_once")
    async with inproc_agent(make_settings(config_dir=config), client) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        new = await agent.conn.new_session(cwd=str(one), mcp_servers=[])
        await agent.conn.prompt(session_id=new.session_id, prompt=[text_block("go")])
    [asked] = client.permission_requests
    assert [option.option_id for option in asked.options] == ["allow_once", "allow_always", "reject_once"]
    assert not (two / "x.txt").exists()
    assert json.loads(json.dumps(rules_in(config))) == [{"action": "allow", "tool": "write_file"}]
