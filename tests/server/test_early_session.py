"""The early `session/new`: which requests the early reader answers, what it leaves untouched for the full
agent, and the session the full agent takes over (in process, on OS pipes, as `coder-agent acp` reads fd 0)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from coder_agent.config.settings import Settings
from coder_agent.prestart.capabilities import initialize_result
from coder_agent.prestart.early import EarlyRead, answer_initialize, answer_next
from coder_agent.prestart.early_session import EarlySession, new_session_answerer
from coder_agent.prestart.settings_peek import Peek
from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer
from coder_agent.server.session_mcp import SessionMcp
from tests.support.driving import initialize, request
from tests.support.inproc import inproc_raw

pytestmark = pytest.mark.anyio

MCP_SCRIPT = str(Path(__file__).resolve().parents[1] / "support" / "mcp_server_script.py")
EXACT = Peek("openai/scripted", ("openai/other",), "default", exact=True)


def line(message: Any) -> bytes:
    return json.dumps(message).encode() + b"\n"


class Pipes:
    def __init__(self) -> None:
        self.in_read, self.in_write = os.pipe()
        self.out_read, self.out_write = os.pipe()

    def written(self) -> list[dict[str, Any]]:
        os.set_blocking(self.out_read, False)
        try:
            data = os.read(self.out_read, 1 << 20)
        except BlockingIOError:
            return []
        return [json.loads(text) for text in data.splitlines()]

    def close(self) -> None:
        for fd in (self.in_read, self.in_write, self.out_read, self.out_write):
            os.close(fd)


@pytest.fixture
def pipes() -> Iterator[Pipes]:
    made = Pipes()
    yield made
    made.close()


def early_read(pipes: Pipes, second: bytes, peek: Peek = EXACT, ready_fd: int | None = None) -> EarlyRead:
    """Both lines sent; the early reader run as `coder-agent acp` runs it."""
    os.write(pipes.in_write, line(initialize(0)) + second)
    early = answer_initialize(pipes.in_read, pipes.out_write, initialize_result)
    return answer_next(early, pipes.in_read, pipes.out_write, "session/new", new_session_answerer(peek), ready_fd)


def test_a_plain_session_new_is_answered_and_what_follows_is_left_to_the_agent(pipes: Pipes, tmp_path: Path) -> None:
    prompt = line(request(2, "session/prompt", {"sessionId": "x", "prompt": []}))
    params = {"cwd": str(tmp_path), "mcpServers": [], "additionalDirectories": ["/srv"], "_meta": {"a": 1}}
    early = early_read(pipes, line(request(1, "session/new", params)) + prompt)
    replies = pipes.written()
    assert [reply["id"] for reply in replies] == [0, 1]
    result = replies[1]["result"]
    assert isinstance(early.answered, EarlySession) and early.answered.id == result["sessionId"]
    assert (early.answered.cwd, early.answered.additional_directories) == (str(tmp_path), ["/srv"])
    assert result["sessionId"].startswith("sess_") and len(result["sessionId"]) == 5 + 32
    assert result["modes"]["currentModeId"] == "default"
    model = next(option for option in result["configOptions"] if option["id"] == "model")
    assert model["currentValue"] == "openai/scripted"
    assert [option["value"] for option in model["options"]] == ["openai/scripted", "openai/other"]
    assert early.unread == prompt and early.initialize is not None


def test_a_session_new_naming_mcp_servers_is_answered_and_they_go_to_the_agent(pipes: Pipes, tmp_path: Path) -> None:
    servers = [
        {"name": "local", "command": "srv", "args": ["-v"], "env": [{"name": "K", "value": "v"}]},
        {"type": "http", "name": "remote", "url": "https://mcp.example/mcp", "headers": [{"name": "A", "value": "b"}]},
    ]
    early = early_read(pipes, line(request(1, "session/new", {"cwd": str(tmp_path), "mcpServers": servers})))
    assert [reply["id"] for reply in pipes.written()] == [0, 1]
    assert isinstance(early.answered, EarlySession) and early.answered.mcp_servers == servers


@pytest.mark.parametrize(
    "params",
    [
        pytest.param({"cwd": "/w", "mcpServers": [{"name": "x", "command": 5}]}, id="mcp-command-type"),
        pytest.param({"cwd": "/w", "mcpServers": [{"name": "x", "command": "x", "env": [{"name": 1}]}]}, id="mcp-env"),
        pytest.param({"cwd": "/w", "mcpServers": [{"type": "ws", "name": "x", "url": "u"}]}, id="mcp-type"),
        pytest.param({"cwd": "/w", "mcpServers": [{"type": "http", "name": "x"}]}, id="mcp-no-url"),
        pytest.param({"cwd": "/w", "mcpServers": {}}, id="mcp-not-a-list"),
        pytest.param({"cwd": "w", "mcpServers": []}, id="relative-cwd"),
        pytest.param({"cwd": 5, "mcpServers": []}, id="cwd-type"),
        pytest.param({"cwd": "/w"}, id="no-mcpServers"),
        pytest.param({"cwd": "/w", "mcpServers": [], "additionalDirectories": ["d"]}, id="relative-directory"),
        pytest.param({"cwd": "/w", "mcpServers": [], "additionalDirectories": None}, id="null-directories"),
        pytest.param({"cwd": "/w", "mcpServers": [], "_meta": "x"}, id="meta-type"),
        pytest.param({"cwd": "/w\ud800", "mcpServers": []}, id="lone-surrogate"),
    ],
)
def test_a_session_new_the_agent_might_answer_otherwise_is_left_untouched(pipes: Pipes, params: Any) -> None:
    second = json.dumps(request(1, "session/new", params)).encode("utf-8", "surrogatepass") + b"\n"
    early = early_read(pipes, second)
    assert [reply["id"] for reply in pipes.written()] == [0]
    assert early.answered is None and early.unread == second


@pytest.mark.parametrize(
    "second",
    [
        pytest.param(line(request(1, "session/list", {})), id="another-method"),
        pytest.param(
            line({"jsonrpc": "2.0", "method": "session/new", "params": {"cwd": "/w", "mcpServers": []}}),
            id="notification",
        ),
        pytest.param(b'{"jsonrpc": "2.0", "id": 1, "method": "session/new"\n', id="broken-json"),
    ],
)
def test_other_lines_are_left_untouched(pipes: Pipes, second: bytes) -> None:
    early = early_read(pipes, second)
    assert [reply["id"] for reply in pipes.written()] == [0]
    assert early.answered is None and early.unread == second


def test_settings_the_peek_cannot_read_exactly_leave_session_new_to_the_agent(pipes: Pipes) -> None:
    second = line(request(1, "session/new", {"cwd": "/w", "mcpServers": []}))
    early = early_read(pipes, second, Peek("openai/scripted", (), "default", exact=False))
    assert [reply["id"] for reply in pipes.written()] == [0]
    assert early.answered is None and early.unread == second


def test_the_reader_stops_waiting_once_the_runtime_is_ready(pipes: Pipes) -> None:
    ready_read, ready_write = os.pipe()
    try:
        os.write(ready_write, b"!")
        early = early_read(pipes, b'{"jsonrpc": "2.0", "id": 1, "method": "sess', ready_fd=ready_read)
    finally:
        os.close(ready_read)
        os.close(ready_write)
    assert early.answered is None and early.unread == b'{"jsonrpc": "2.0", "id": 1, "method": "sess'
    assert not early.eof


async def test_the_early_answer_offers_thinking_for_a_model_that_takes_it_and_the_agent_agrees(
    settings: Settings, workspace: Path
) -> None:
    thinking = settings.model_copy(update={"model": "anthropic/claude-sonnet-4-5"})
    async with inproc_raw(thinking, stdio=True) as raw:
        await raw.send_json(initialize(0))
        await raw.read_message()
        await raw.send_json(request(1, "session/new", {"cwd": str(workspace), "mcpServers": []}))
        early = (await raw.read_message())["result"]
        update = (await raw.read_message())["params"]["update"]
        session_id = early["sessionId"]
        await raw.send_json(
            request(
                2, "session/set_config_option", {"sessionId": session_id, "configId": "thought_level", "value": "high"}
            )
        )
        chosen = await raw.read_message()
        while "id" not in chosen:
            chosen = await raw.read_message()
    assert [option["id"] for option in early["configOptions"]] == ["mode", "model", "thought_level"]
    assert update["sessionUpdate"] == "available_commands_update"  # taken over: no other options to announce
    assert chosen["id"] == 2 and "error" not in chosen
    levels = {o["id"]: o["currentValue"] for o in chosen["result"]["configOptions"]}
    assert levels["thought_level"] == "high"


async def test_the_session_serves_even_when_taking_it_over_fails_after_it_exists(
    settings: Settings, srv: ScriptedModelServer, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the MCP configuration could not be read")

    monkeypatch.setattr(SessionMcp, "attach", broken)
    srv.enqueue(Reply.text("still here"))
    async with inproc_raw(settings, stdio=True) as raw:
        await raw.send_json(initialize(0))
        await raw.read_message()
        await raw.send_json(request(1, "session/new", {"cwd": str(workspace), "mcpServers": []}))
        session_id = (await raw.read_message())["result"]["sessionId"]
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
        await raw.send_json(request(2, "session/prompt", prompt))
        while "id" not in (message := await raw.read_message()):
            pass
    assert message["result"]["stopReason"] == "end_turn"


async def test_mcp_servers_named_in_an_early_session_new_are_started_by_the_agent(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    server = {"name": "demo", "command": sys.executable, "args": [MCP_SCRIPT, "stdio"], "env": []}
    srv.enqueue(Reply.text("ok"))
    async with inproc_raw(settings, stdio=True) as raw:
        await raw.send_json(initialize(0))
        await raw.read_message()
        await raw.send_json(request(1, "session/new", {"cwd": str(workspace), "mcpServers": [server]}))
        session_id = (await raw.read_message())["result"]["sessionId"]
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
        await raw.send_json(request(2, "session/prompt", prompt))
        while "id" not in (message := await raw.read_message(30)):  # the turn waits for the server's tools
            pass
    assert message["result"]["stopReason"] == "end_turn"
    offered = {tool["function"]["name"] for tool in srv.requests[0].body["tools"]}
    assert "mcp__demo__add" in offered


@pytest.mark.parametrize(
    "update",
    [
        pytest.param({"model": None}, id="no-model"),
        pytest.param({"models": ["openai/a", "openai/scripted"], "default_mode": "accept-edits"}, id="menu-and-mode"),
    ],
)
async def test_the_early_answer_is_the_agents_answer(settings: Settings, workspace: Path, update: Any) -> None:
    changed = settings.model_copy(update=update)
    new = {"cwd": str(workspace), "mcpServers": [], "additionalDirectories": [str(workspace)]}
    async with inproc_raw(changed, stdio=True) as raw:
        await raw.send_json(initialize(0))
        await raw.read_message()
        await raw.send_json(request(1, "session/new", new))
        early = (await raw.read_message())["result"]
        await raw.send_json(request(2, "session/new", new))  # the full agent answers this one
        while "id" not in (full := await raw.read_message()):
            pass
    assert full["id"] == 2
    assert early.pop("sessionId") != full["result"].pop("sessionId")
    assert early == full["result"]


@pytest.mark.parametrize("early", [True, False], ids=["early", "runtime"])
@pytest.mark.parametrize(("model", "level"), [("anthropic/claude-sonnet-4-5", "medium"), ("openai/gpt-4o", "off")])
async def test_a_new_session_starts_at_the_configured_thought_level_where_its_model_thinks(
    settings: Settings, workspace: Path, early: bool, model: str, level: str
) -> None:
    configured = settings.model_copy(update={"model": model, "thought_level": "medium"})
    async with inproc_raw(configured, stdio=early) as raw:
        await raw.send_json(initialize(0))
        await raw.read_message()
        await raw.send_json(request(1, "session/new", {"cwd": str(workspace), "mcpServers": []}))
        answer = await raw.read_message()
        while "id" not in answer:
            answer = await raw.read_message()
    options = {option["id"]: option["currentValue"] for option in answer["result"]["configOptions"]}
    assert options.get("thought_level", "off") == level
