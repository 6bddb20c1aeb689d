"""Driving the agent as an editor does, whichever harness serves it: in this process or as a real process.

Everything here takes an agent with ``conn`` (the official SDK's ``ClientSideConnection``), ``client`` (the
``RecordingClient`` answering it) and ``messages`` (every line both ways, as the schema checker saw them).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

import anyio
from acp import PROTOCOL_VERSION, text_block
from acp.client.connection import ClientSideConnection
from acp.schema import PromptResponse

from coder_agent.scripted.records import RecordedRequest
from coder_agent.store.base import SessionRecord
from coder_agent.store.sqlite import SqliteSessionStore
from tests.support.recording_client import RecordingClient

REPO_ROOT = Path(__file__).resolve().parents[2]
USER_CHUNK = "user_message_chunk"


class Driven(Protocol):
    @property
    def conn(self) -> ClientSideConnection: ...

    @property
    def client(self) -> RecordingClient: ...

    @property
    def messages(self) -> list[dict[str, Any]]: ...


class Wire(Protocol):
    @property
    def messages(self) -> list[dict[str, Any]]: ...


# Raw JSON-RPC messages, for the byte-level harnesses.


def initialize(request_id: Any, protocol_version: int = 1) -> dict[str, Any]:
    params = {"protocolVersion": protocol_version, "clientCapabilities": {}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


def request(request_id: Any, method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


# Opening sessions and prompting through the SDK.


async def open_session(agent: Driven, cwd: Path) -> str:
    await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
    return (await agent.conn.new_session(cwd=str(cwd), mcp_servers=[])).session_id


async def prompt(agent: Driven, session_id: str, text: str) -> str:
    return (await agent.conn.prompt(session_id=session_id, prompt=[text_block(text)])).stop_reason


async def delete_session(agent: Driven, session_id: str) -> Any:
    """`session/delete`: stable in ACP v1, but the SDK's client has no method for it yet."""
    return await agent.conn._conn.send_request("session/delete", {"sessionId": session_id})


class BackgroundPrompt:
    """A `session/prompt` running in a task, so the test can act while it runs (cancel, close the input ...)."""

    def __init__(self, agent: Driven, session_id: str, text: str) -> None:
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


# What crossed the wire.


def session_updates(messages: Iterable[dict[str, Any]], session_id: str) -> list[dict[str, Any]]:
    """The `update` objects of every `session/update` for `session_id`, as they were on the wire, in order."""
    return [
        message["params"]["update"]
        for message in messages
        if message.get("method") == "session/update" and message["params"]["sessionId"] == session_id
    ]


def updates(agent: Wire, session_id: str, kind: str) -> list[dict[str, Any]]:
    """The `update` objects of kind `kind` the agent sent for `session_id`, as they were on the wire, in order."""
    return [u for u in session_updates(agent.messages, session_id) if u["sessionUpdate"] == kind]


def texts(chunks: list[dict[str, Any]]) -> list[str]:
    return [chunk["content"]["text"] for chunk in chunks]


def kinds(updates: Iterable[dict[str, Any]]) -> list[str]:
    return [update["sessionUpdate"] for update in updates]


def reply_positions(agent: Wire) -> list[int]:
    """Where, among the lines the agent wrote, its responses are (in the order the client sent the requests)."""
    return [i for i, message in enumerate(agent.messages) if "id" in message and "method" not in message]


def tool_calls(agent: Wire) -> dict[str, dict[str, Any]]:
    """Each tool call as its latest state: the tool_call merged with its updates, in order of appearance."""
    calls: dict[str, dict[str, Any]] = {}
    for message in agent.messages:
        if message.get("method") != "session/update":
            continue
        update = message["params"]["update"]
        if update["sessionUpdate"] in ("tool_call", "tool_call_update"):
            state = calls.setdefault(update["toolCallId"], {"statuses": []})
            state.update({k: v for k, v in update.items() if k != "sessionUpdate"})
            if "status" in update:
                state["statuses"].append(update["status"])
    return calls


# What the model was sent.


def conversation(request: RecordedRequest) -> list[tuple[str, Any]]:
    """(role, content) of each message the model was sent, after the system prompt."""
    messages = request.body["messages"]
    assert messages[0]["role"] == "system"
    return [(message["role"], message.get("content")) for message in messages[1:]]


def spoken(request: RecordedRequest) -> list[tuple[str, Any]]:
    """The user's and the assistant's words only (no tool plumbing, no empty tool-call turns)."""
    return [(role, content) for role, content in conversation(request) if role in ("user", "assistant") and content]


def model_saw(request_body: dict[str, Any]) -> str:
    """Everything the tool messages of a model request carried, joined (what the model was told)."""
    return "\n".join(str(m.get("content")) for m in request_body["messages"] if m.get("role") == "tool")


# The store.


def seed_sessions(home: Path, records: Iterable[SessionRecord]) -> None:
    """Sessions written straight to the agent's store: fast, for listing and paging."""
    store = SqliteSessionStore(home / "sessions.db")
    try:
        for record in records:
            store.create(record)
    finally:
        store.close()
