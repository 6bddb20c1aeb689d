"""Self-tests of the e2e harness, against an agent built on the SDK's own agent side and tiny scripted agents."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import anyio
import pytest
from acp import PROTOCOL_VERSION, text_block
from acp.schema import AgentMessageChunk

from tests.support.acp_client import PermissionPolicy, PermissionRequest, RecordingClient, raw_agent, spawn_agent

pytestmark = pytest.mark.anyio

ECHO_AGENT = [sys.executable, str(Path(__file__).with_name("sdk_echo_agent.py"))]
INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}


def scripted_agent(body: str) -> list[str]:
    """A python -c agent; `out(obj)` writes one message, `send(raw)` writes raw text to stdout."""
    prelude = "import json, sys\ndef send(raw): sys.stdout.write(raw); sys.stdout.flush()\n"
    prelude += "def out(obj): send(json.dumps(obj) + '\\n')\n"
    return [sys.executable, "-c", prelude + textwrap.dedent(body)]


async def test_echo_agent_round_trip_is_recorded_and_valid() -> None:
    async with spawn_agent(command=ECHO_AGENT) as agent:
        init = await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await agent.conn.new_session(cwd=str(Path.cwd()), mcp_servers=[])
        done = await agent.conn.prompt(session_id=session.session_id, prompt=[text_block("hello")])
        chunk = await agent.client.wait_for_update(session.session_id, lambda u: isinstance(u, AgentMessageChunk))
    assert init.protocol_version == 1
    assert done.stop_reason == "end_turn"
    assert chunk.content.text == "echo: hello"
    assert agent.client.agent_text(session.session_id) == "echo: hello"
    assert agent.validator.violations == []
    assert [m.get("method", "response") for m in agent.messages] == [
        "response",
        "response",
        "session/update",
        "response",
    ]
    assert len(agent.agent_lines) == 4
    assert agent.proc.returncode == 0 and not agent.killed  # it left on stdin EOF by itself


@pytest.mark.parametrize(
    ("policy", "echoed"),
    [
        ("allow_once", "echo: selected allow"),
        ("reject_once", "echo: selected reject"),
        ("allow_always", "echo: cancelled"),  # no option of that kind: cancelled
        ("cancelled", "echo: cancelled"),
        (lambda request: request.options[-1].option_id, "echo: selected reject"),
    ],
)
async def test_permission_requests_are_answered_by_the_policy(policy: PermissionPolicy, echoed: str) -> None:
    client = RecordingClient(permission=policy)
    async with spawn_agent(command=ECHO_AGENT, client=client) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await agent.conn.new_session(cwd=str(Path.cwd()))
        await agent.conn.prompt(session_id=session.session_id, prompt=[text_block("permission please")])
        await client.wait_for_updates(session.session_id, 1)
    assert client.agent_text(session.session_id) == echoed
    [request] = client.permission_requests
    assert isinstance(request, PermissionRequest)
    assert [option.kind for option in request.options] == ["allow_once", "reject_once"]


async def test_a_bad_line_from_the_agent_fails_the_test_on_exit() -> None:
    agent_script = scripted_agent("""
        sys.stdin.readline()
        out({"jsonrpc": "2.0", "method": "session/update",
             "params": {"sessionId": "s", "update": {"kind": "agent_message_chunk"}}})
        out({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1}})
        sys.stdin.read()
    """)
    with pytest.raises(AssertionError, match=r"\$\.update\.sessionUpdate: missing") as caught:
        async with spawn_agent(command=agent_script) as agent:
            await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
    assert "agent line 1" in str(caught.value)


async def test_raw_agent_reads_validated_messages_and_sees_the_exit() -> None:
    async with raw_agent(command=ECHO_AGENT) as raw:
        await raw.send_json(INITIALIZE)
        reply = await raw.read_message()
        await raw.close_stdin()
        assert await raw.wait_exit() == 0
    assert reply["result"]["protocolVersion"] == 1
    assert raw.messages == [reply]


async def test_raw_agent_rejects_two_messages_on_one_line() -> None:
    message = json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": {}})
    agent_script = scripted_agent(f"send({message!r} * 2 + '\\n')")
    with pytest.raises(AssertionError, match="Extra data"):
        async with raw_agent(command=agent_script) as raw:
            await raw.read_message()


async def test_stderr_is_kept_for_debugging() -> None:
    agent_script = scripted_agent("sys.stderr.write('booting\\n'); sys.stdin.read()")
    async with raw_agent(command=agent_script) as raw:
        await raw.close_stdin()
        await raw.wait_exit()
        assert "booting" in raw.stderr_text()
    assert "booting" in raw.stderr_text()


async def test_an_agent_that_ignores_stdin_eof_is_killed() -> None:
    agent_script = scripted_agent("import time; time.sleep(600)")
    with anyio.fail_after(10):
        async with raw_agent(command=agent_script, shutdown_timeout=0.5) as raw:
            pass
    assert raw.killed
    assert raw.proc.returncode is not None and raw.proc.returncode < 0


async def test_requests_to_a_dead_agent_fail_instead_of_hanging() -> None:
    with pytest.raises(ConnectionError):
        async with spawn_agent(command=scripted_agent("pass"), timeout=10) as agent:
            await agent.proc.wait()
            await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)


async def test_the_base_env_is_minimal_and_the_test_env_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SECRET_FROM_THE_DEVELOPER_SHELL", "x")
    agent_script = scripted_agent("import os; out({'jsonrpc': '2.0', 'method': '_env', 'params': dict(os.environ)})")
    async with raw_agent({"CODER_AGENT_MODEL": "fake"}, command=agent_script) as raw:
        env = (await raw.read_message())["params"]
    assert env["CODER_AGENT_MODEL"] == "fake"
    assert "SECRET_FROM_THE_DEVELOPER_SHELL" not in env
    assert "PATH" in env


async def test_a_failing_body_keeps_its_own_exception_and_gets_the_agent_stderr() -> None:
    agent_script = scripted_agent("sys.stderr.write('model exploded\\n'); sys.stderr.flush(); sys.stdin.read()")
    with pytest.raises(TimeoutError) as caught:
        async with spawn_agent(command=agent_script) as agent:
            await agent.client.wait_for_updates("no-such-session", 1, timeout=0.2)
    assert "model exploded" in "\n".join(caught.value.__notes__)


async def test_lines_longer_than_the_stream_buffer_reach_the_client() -> None:
    agent_script = scripted_agent("""
        chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x" * 1_000_000}}
        out({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": chunk}})
        sys.stdin.read()
    """)
    async with spawn_agent(command=agent_script) as agent:
        await agent.client.wait_for_updates("s", 1)
    assert len(agent.client.agent_text("s")) == 1_000_000
