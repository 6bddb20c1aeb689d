"""A session of the agent served in this process, in a chosen client profile, and the tool calls it showed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import anyio
from acp import PROTOCOL_VERSION, text_block
from acp.schema import AvailableCommandsUpdate, McpServerStdio

from coder_agent.config.settings import Settings
from tests.support.driving import tool_calls, updates
from tests.support.editor_client import EditorClient
from tests.support.inproc import InprocAgent, inproc_agent
from tests.support.recording_client import PermissionPolicy, RecordingClient

Profile = Literal["editor", "bare"]
PROFILES: list[Profile] = ["editor", "bare"]


@dataclass
class Run:
    agent: InprocAgent
    client: RecordingClient
    session_id: str

    async def prompt(self, text: str, timeout: float = 30.0) -> str:
        with anyio.fail_after(timeout):
            response = await self.agent.conn.prompt(session_id=self.session_id, prompt=[text_block(text)])
        return response.stop_reason

    def tool_calls(self) -> dict[str, dict[str, Any]]:
        return tool_calls(self.agent)

    def plans(self) -> list[dict[str, Any]]:
        return updates(self.agent, self.session_id, "plan")

    async def set_mode(self, mode: str) -> None:
        with anyio.fail_after(10):
            await self.agent.conn.set_session_mode(session_id=self.session_id, mode_id=mode)


@asynccontextmanager
async def session(
    profile: Profile,
    settings: Settings,
    workspace: Path,
    *,
    mode: str | None = None,
    permission: PermissionPolicy = "allow_once",
    directories: list[str] | None = None,
    mcp_servers: list[McpServerStdio] | None = None,
    client: RecordingClient | None = None,
    load: str | None = None,
) -> AsyncIterator[Run]:
    """A new session in `workspace` (or the stored session `load`, loaded there): `editor` serves fs and
    terminal, `bare` offers nothing."""
    async with anyio.create_task_group() as tg:
        if client is None and profile == "editor":
            client = EditorClient(tg, permission)
        elif client is None:
            client = RecordingClient(permission)
        capabilities = getattr(client, "capabilities", None)  # an editor's, or an eliciting client's
        async with inproc_agent(settings, client) as agent:
            with anyio.fail_after(20):
                await agent.conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities)
                if load is None:
                    new = await agent.conn.new_session(
                        cwd=str(workspace), mcp_servers=mcp_servers or [], additional_directories=directories
                    )
                    session_id = new.session_id
                else:
                    await agent.conn.load_session(session_id=load, cwd=str(workspace), mcp_servers=mcp_servers or [])
                    session_id = load
            run = Run(agent, client, session_id)
            if mode is not None:
                await run.set_mode(mode)
            yield run
        tg.cancel_scope.cancel()


async def commands_of(agent: InprocAgent, session_id: str) -> dict[str, Any]:
    def announced() -> list[Any]:
        return [u for u in agent.client.updates(session_id) if isinstance(u, AvailableCommandsUpdate)]

    await agent.client.wait_for(lambda: bool(announced()))
    return {command.name: command for command in announced()[-1].available_commands}
