"""MCP servers beyond the editor's: the user's mcp.json, CODER_AGENT_MCP_CONFIG, and a project's .mcp.json only
once the user approved it (kept by path and content hash)."""

from __future__ import annotations

import json
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, text_block

from coder_agent.config.settings import Settings
from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.inproc import inproc_agent
from tests.support.recording_client import PermissionRequest, RecordingClient

pytestmark = pytest.mark.anyio

TEST_SERVER = str(Path(__file__).parents[1] / "support" / "mcp_server_script.py")
# A "server" that only leaves a mark that it was started, then exits (the agent reports it and goes on).
MARK = "import pathlib, sys; pathlib.Path(sys.argv[1]).write_text('started')"


def marker_server(marker: Path) -> dict[str, Any]:
    return {"command": sys.executable, "args": ["-c", MARK, str(marker)]}


def write_mcp(path: Path, servers: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


async def prompt_once(settings: Settings, srv: ScriptedModelServer, cwd: Path, client: RecordingClient) -> list[str]:
    """One session and one prompt at `cwd`; the tools the model was offered."""
    srv.enqueue(Reply.text("Done."))
    async with inproc_agent(settings, client) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        new = await agent.conn.new_session(cwd=str(cwd), mcp_servers=[])
        done = await agent.conn.prompt(session_id=new.session_id, prompt=[text_block("go")])
    assert done.stop_reason == "end_turn"
    return [tool["function"]["name"] for tool in srv.requests[-1].body.get("tools", [])]


def answering(option_id: str | None) -> Callable[[PermissionRequest], str | None]:
    return lambda request: option_id


async def test_the_users_mcp_json_servers_serve_every_session(
    make_settings: Any, srv: ScriptedModelServer, tmp_path: Path, workspace: Path
) -> None:
    config = tmp_path / "config"
    write_mcp(config / "mcp.json", {"mine": {"command": sys.executable, "args": [TEST_SERVER, "stdio"]}})
    tools = await prompt_once(make_settings(config_dir=config, mcp_timeout=20), srv, workspace, RecordingClient())
    assert "mcp__mine__add" in tools


async def test_a_projects_mcp_json_starts_nothing_until_the_user_says_yes(
    make_settings: Any, srv: ScriptedModelServer, tmp_path: Path, workspace: Path
) -> None:
    marker = tmp_path / "started"
    write_mcp(workspace / ".mcp.json", {"planted": marker_server(marker)})
    settings = make_settings(config_dir=tmp_path / "config")
    refusing = RecordingClient(answering("reject_once"))
    await prompt_once(settings, srv, workspace, refusing)
    [asked] = refusing.permission_requests
    assert asked.tool_call.title is not None and ".mcp.json" in asked.tool_call.title
    assert "planted" in json.dumps(asked.tool_call.model_dump(mode="json"))
    assert not marker.exists()

    dismissing = RecordingClient("cancelled")  # "not now" again: asked again next time, nothing started
    await prompt_once(settings, srv, workspace, dismissing)
    assert len(dismissing.permission_requests) == 1 and not marker.exists()


async def test_trusting_a_projects_mcp_json_lasts_until_the_file_changes(
    make_settings: Any, srv: ScriptedModelServer, tmp_path: Path, workspace: Path
) -> None:
    marker = tmp_path / "started"
    project_file = write_mcp(workspace / ".mcp.json", {"tools": marker_server(marker)})
    config = tmp_path / "config"
    settings = make_settings(config_dir=config)
    trusting = RecordingClient(answering("trust_project_mcp"))
    await prompt_once(settings, srv, workspace, trusting)
    assert len(trusting.permission_requests) == 1 and marker.read_text() == "started"
    [entry] = tomllib.loads((config / "trusted-projects.toml").read_text())["project"]
    assert entry["file"] == str(project_file) and entry["decision"] == "allow"

    marker.unlink()
    later = RecordingClient(answering("reject_once"))
    await prompt_once(settings, srv, workspace, later)
    assert later.permission_requests == [] and marker.exists()  # started from session/new, not asked

    marker.unlink()
    write_mcp(workspace / ".mcp.json", {"tools": marker_server(marker), "more": marker_server(tmp_path / "m2")})
    changed = RecordingClient(answering("reject_once"))
    await prompt_once(settings, srv, workspace, changed)
    assert len(changed.permission_requests) == 1 and not marker.exists()


async def test_never_for_this_file_is_kept_and_not_asked_again(
    make_settings: Any, srv: ScriptedModelServer, tmp_path: Path, workspace: Path
) -> None:
    marker = tmp_path / "started"
    write_mcp(workspace / ".mcp.json", {"x": marker_server(marker)})
    settings = make_settings(config_dir=tmp_path / "config")
    await prompt_once(settings, srv, workspace, RecordingClient(answering("reject_always")))
    again = RecordingClient(answering("trust_project_mcp"))
    await prompt_once(settings, srv, workspace, again)
    assert again.permission_requests == [] and not marker.exists()


async def test_mcp_config_files_are_the_users_consent(
    make_settings: Any, srv: ScriptedModelServer, tmp_path: Path, workspace: Path
) -> None:
    marker, other = tmp_path / "from-project", tmp_path / "from-file"
    project_file = write_mcp(workspace / ".mcp.json", {"p": marker_server(marker)})
    extra = write_mcp(tmp_path / "extra.json", {"e": marker_server(other)})
    settings = make_settings(config_dir=tmp_path / "config", mcp_config=[str(project_file), str(extra)])
    client = RecordingClient(answering("reject_once"))
    await prompt_once(settings, srv, workspace, client)
    assert client.permission_requests == []
    assert marker.exists() and other.exists()


async def test_without_a_config_folder_a_project_file_can_be_started_for_the_session_only(
    settings: Settings, srv: ScriptedModelServer, tmp_path: Path, workspace: Path
) -> None:
    marker = tmp_path / "started"
    write_mcp(workspace / ".mcp.json", {"x": marker_server(marker)})
    once = RecordingClient(answering("allow_once"))
    await prompt_once(settings, srv, workspace, once)
    assert marker.exists()
    marker.unlink()
    again = RecordingClient(answering("reject_once"))
    await prompt_once(settings, srv, workspace, again)
    assert len(again.permission_requests) == 1 and not marker.exists()
