"""A tiny ACP agent built on the official SDK's agent side: the partner for the harness's self-tests.

``python tests/support/sdk_echo_agent.py`` answers initialize and session/new; each prompt streams one
agent_message_chunk ``echo: <prompt text>`` and ends the turn. A prompt starting with ``permission`` first asks
the client for permission and echoes the outcome (``echo: selected allow`` / ``echo: cancelled``).
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, cast

from acp import PROTOCOL_VERSION, run_agent, update_agent_message_text
from acp.interfaces import Agent, Client
from acp.schema import (
    AllowedOutcome,
    Implementation,
    InitializeResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    TextContentBlock,
    ToolCallUpdate,
)


class EchoAgent:
    def __init__(self) -> None:
        self._client: Client | None = None

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        info = Implementation(name="sdk-echo-agent", version="0.0.1")
        return InitializeResponse(protocol_version=PROTOCOL_VERSION, agent_info=info)

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        return NewSessionResponse(session_id=f"echo-{uuid.uuid4().hex[:8]}")

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        assert self._client is not None
        text = " ".join(block.text for block in prompt if isinstance(block, TextContentBlock))
        if text.startswith("permission"):
            text = await self._ask(session_id)
        await self._client.session_update(session_id, update_agent_message_text(f"echo: {text}"))
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        return None

    async def _ask(self, session_id: str) -> str:
        assert self._client is not None
        options = [
            PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
            PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
        ]
        tool_call = ToolCallUpdate(tool_call_id="call-1", title="Echo something", kind="other")
        response = await self._client.request_permission(session_id, tool_call, options)
        outcome = response.outcome
        return f"selected {outcome.option_id}" if isinstance(outcome, AllowedOutcome) else "cancelled"


if __name__ == "__main__":
    # Partial on purpose: the SDK answers method-not-found for the Agent methods it lacks.
    asyncio.run(run_agent(cast(Agent, EchoAgent())))
