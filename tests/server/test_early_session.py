"""The early `session/new`: which requests the early reader answers, what it leaves untouched for the full
agent, and the session the full agent takes over (in process, on OS pipes, as `coder-agent acp` reads fd 0)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from coder_agent.config.settings import Settings
from coder_agent.llm.wire import price_map
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


@pytest.mark.parametrize(
    "params",
    [
        pytest.param({"cwd": "/w", "mcpServers": [{"name": "x", "command": "x", "args": [], "env": []}]}, id="mcp"),
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


async def test_the_agent_says_so_when_its_options_differ_from_the_early_answer(
    settings: Settings, workspace: Path
) -> None:
    # Early, whether a model takes a thought level is never known; here litellm's map is loaded by the time
    # the agent takes the session over, and the model takes one: the agent sends its options.
    await anyio.to_thread.run_sync(price_map.load)
    reasoning = settings.model_copy(update={"model": "openai/o3"})
    async with inproc_raw(reasoning, stdio=True) as raw:
        await raw.send_json(initialize(0))
        await raw.read_message()
        await raw.send_json(request(1, "session/new", {"cwd": str(workspace), "mcpServers": []}))
        early = (await raw.read_message())["result"]
        updates = [(await raw.read_message())["params"]["update"] for _ in range(3)]
    assert [option["id"] for option in early["configOptions"]] == ["mode", "model"]
    kinds = [update["sessionUpdate"] for update in updates]
    assert kinds == ["current_mode_update", "config_option_update", "available_commands_update"]
    assert [option["id"] for option in updates[1]["configOptions"]] == ["mode", "model", "thought_level"]


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
