"""The requests of a session keep a byte-stable prefix, so a provider's prompt cache matches each call's start: the
system prompt stays the one the conversation began with (a new mode is told in the next prompt), the tools keep
their order (the built-in ones first, then the MCP servers' by name), the history only grows."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from acp.schema import McpServerStdio

from coder_agent.config.settings import Settings
from coder_agent.scripted.script import Reply, Script
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.server_helpers import session

pytestmark = pytest.mark.anyio

SERVER = str(Path(__file__).resolve().parents[1] / "support" / "mcp_server_script.py")
NAMES = ("zeta", "alpha")  # configured in this order


def prefix_kept(before: dict[str, Any], after: dict[str, Any]) -> bool:
    """Whether `after` starts as `before` did: the same tools, and its messages begin with all of `before`'s."""
    messages = before["messages"]
    return after.get("tools") == before.get("tools") and after["messages"][: len(messages)] == messages


async def test_a_mode_change_is_told_in_the_next_prompt_and_the_system_prompt_stays(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    srv.enqueue(Reply.text("one"), Reply.text("two"), Reply.text("three"))
    async with session("bare", settings, workspace) as run:
        await run.prompt("first")
        await run.set_mode("plan")
        await run.prompt("second")
        await run.prompt("third")
    first, second, third = (request.body for request in srv.requests)
    assert prefix_kept(first, second) and prefix_kept(second, third)
    system = first["messages"][0]["content"]
    assert "default mode" in system.lower() or "the session is in" in system.lower()
    told = second["messages"][-1]["content"]
    assert "plan mode" in told.lower() and told.endswith("second")
    assert "plan mode" not in third["messages"][-1]["content"].lower()  # told once


async def test_mcp_tools_come_after_the_built_in_ones_in_a_stable_order(settings: Settings, workspace: Path) -> None:
    with ScriptedModelServer(Script(default=Reply.text("ok"))) as srv:
        settings = settings.model_copy(update={"api_base": srv.url})
        servers = [McpServerStdio(name=name, command=sys.executable, args=[SERVER, "stdio"], env=[]) for name in NAMES]
        async with session("bare", settings, workspace, mcp_servers=servers) as run:
            await run.prompt("first")
            await run.prompt("second")
        first, second = (request.body for request in srv.requests)
    names = [tool["function"]["name"] for tool in first["tools"]]
    mcp = [name for name in names if name.startswith("mcp__")]
    assert names[: len(names) - len(mcp)] == [n for n in names if not n.startswith("mcp__")]  # built-in first
    assert mcp == sorted(mcp) and {n.split("__")[1] for n in mcp} == {"alpha", "zeta"}
    assert json.dumps(first["tools"]) == json.dumps(second["tools"])
