"""Helpers for the tool scenarios: a session in a chosen client profile, and the tool calls it showed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import anyio
from acp import PROTOCOL_VERSION, text_block
from acp.schema import ClientCapabilities

from tests.e2e.helpers import FIRST_PROMPT_TIMEOUT, updates
from tests.support.acp_client import SpawnedAgent, spawn_agent
from tests.support.editor_client import EditorClient
from tests.support.recording_client import PermissionPolicy, RecordingClient

Profile = Literal["editor", "bare"]


@dataclass
class Run:
    agent: SpawnedAgent
    client: RecordingClient
    session_id: str

    async def prompt(self, text: str, timeout: float = FIRST_PROMPT_TIMEOUT) -> str:
        with anyio.fail_after(timeout):
            response = await self.agent.conn.prompt(session_id=self.session_id, prompt=[text_block(text)])
        return response.stop_reason

    def tool_calls(self) -> dict[str, dict[str, Any]]:
        """Each tool call as its latest state: the tool_call merged with its updates, in order of appearance."""
        calls: dict[str, dict[str, Any]] = {}
        for message in self.agent.messages:
            if message.get("method") != "session/update":
                continue
            update = message["params"]["update"]
            if update["sessionUpdate"] in ("tool_call", "tool_call_update"):
                state = calls.setdefault(update["toolCallId"], {"statuses": []})
                state.update({k: v for k, v in update.items() if k != "sessionUpdate"})
                if "status" in update:
                    state["statuses"].append(update["status"])
        return calls

    def plans(self) -> list[dict[str, Any]]:
        return updates(self.agent, self.session_id, "plan")

    async def set_mode(self, mode: str) -> None:
        with anyio.fail_after(10):
            await self.agent.conn.set_session_mode(session_id=self.session_id, mode_id=mode)


@asynccontextmanager
async def session(
    profile: Profile,
    env: dict[str, str],
    workspace: Path,
    *,
    mode: str | None = None,
    permission: PermissionPolicy = "allow_once",
    directories: list[str] | None = None,
) -> AsyncIterator[Run]:
    async with anyio.create_task_group() as tg:
        client: RecordingClient
        capabilities: ClientCapabilities | None
        if profile == "editor":
            client = EditorClient(tg, permission)
            capabilities = EditorClient.capabilities
        else:
            client = RecordingClient(permission)
            capabilities = None
        async with spawn_agent(env, client=client, cwd=workspace) as agent:
            with anyio.fail_after(20):
                await agent.conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities)
                new = await agent.conn.new_session(
                    cwd=str(workspace), mcp_servers=[], additional_directories=directories
                )
            run = Run(agent, client, new.session_id)
            if mode is not None:
                await run.set_mode(mode)
            yield run
        tg.cancel_scope.cancel()


def model_saw(request_body: dict[str, Any]) -> str:
    """Everything the tool messages of a model request carried, joined (what the model was told)."""
    return "\n".join(str(m.get("content")) for m in request_body["messages"] if m.get("role") == "tool")
