"""Small helpers shared by the end-to-end tests: wire messages, recorded updates, a prompt run in the background."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from acp import text_block
from acp.schema import PromptResponse

from tests.support.acp_client import AgentIO, SpawnedAgent

REPO_ROOT = Path(__file__).resolve().parents[2]

EnvFactory = Callable[..., dict[str, str]]  # the `agent_env` fixture

# The first prompt of a process waits for litellm to import (~2-6 s on a busy 2-core machine).
FIRST_PROMPT_TIMEOUT = 45.0


def initialize(request_id: Any, protocol_version: int = 1) -> dict[str, Any]:
    params = {"protocolVersion": protocol_version, "clientCapabilities": {}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


def request(request_id: Any, method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def updates(agent: AgentIO, session_id: str, kind: str) -> list[dict[str, Any]]:
    """The `update` objects of kind `kind` the agent sent for `session_id`, as they were on the wire, in order."""
    return [
        message["params"]["update"]
        for message in agent.messages
        if message.get("method") == "session/update"
        and message["params"]["sessionId"] == session_id
        and message["params"]["update"]["sessionUpdate"] == kind
    ]


def texts(chunks: list[dict[str, Any]]) -> list[str]:
    return [chunk["content"]["text"] for chunk in chunks]


class BackgroundPrompt:
    """A `session/prompt` running in a task, so the test can act while it runs (cancel, close stdin ...)."""

    def __init__(self, agent: SpawnedAgent, session_id: str, text: str) -> None:
        self._agent = agent
        self._session_id = session_id
        self._text = text
        self.done = anyio.Event()
        self.response: PromptResponse | None = None
        self.error: Exception | None = None

    async def run(self) -> None:
        try:
            self.response = await self._agent.conn.prompt(session_id=self._session_id, prompt=[text_block(self._text)])
        except Exception as exc:
            self.error = exc
        finally:
            self.done.set()

    async def result(self, timeout: float) -> PromptResponse:
        with anyio.fail_after(timeout):
            await self.done.wait()
        if self.error is not None:
            raise self.error
        assert self.response is not None
        return self.response
