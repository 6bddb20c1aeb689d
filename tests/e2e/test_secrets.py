"""No known secret reaches what the real `coder-agent` process writes or shows: its stdout (the protocol, read as
raw lines), its session store (the SQLite file's bytes, the WAL's too), its log file and its stderr, nor what
`coder-agent config` and `doctor` print.

The scripted provider echoes the key each request carried in its error (as some servers and proxies do), or in
its reply's text; the key is fresh for each test, so finding it anywhere is a leak.
"""

from __future__ import annotations

import json
import re
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, connect_to_agent, text_block
from acp.ws import create_websocket_stream

from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.acp_client import RawAgent, raw_agent
from tests.support.agent_env import FIRST_PROMPT_TIMEOUT, EnvFactory, initialize, request
from tests.support.early_stage import announced_commands, held_env, reply_to
from tests.support.recording_client import RecordingClient
from tests.support.served import agent_env as serve_env
from tests.support.served import serve

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

MASKED = "[secret CODER_AGENT_API_KEY]"
ECHO = "upstream refused the key {key}"


def fresh_key() -> str:
    # Not in the `sk-...` form litellm's own redaction knows: a self-hosted server's key is anything at all.
    return "live-" + secrets.token_hex(20)


def written_by_the_agent(raw: RawAgent, home: Path) -> dict[str, bytes]:
    """Everything the agent wrote: its protocol lines, every file in its home (sessions.db, -wal, -shm, logs)."""
    found = {"stdout": b"".join(raw.agent_lines), "stderr": raw.stderr_text().encode()}
    for path in sorted(home.rglob("*")):
        if path.is_file():
            found[str(path.relative_to(home))] = path.read_bytes()
    return found


def assert_nowhere(key: str, written: dict[str, bytes]) -> None:
    forms = {key.encode(), json.dumps(key).encode(), key.encode().hex().encode()}
    leaks = [name for name, data in written.items() if any(form in data for form in forms)]
    assert leaks == [], f"the key is in {leaks}"
    assert "sessions.db" in written and "logs/coder-agent.log" in written  # the store and the log were written


async def _prompt_fails(raw: RawAgent, workspace: Path) -> dict[str, Any]:
    """initialize, session/new, a prompt that fails, session/list (its last turn's error); the prompt's error."""
    seen: list[dict[str, Any]] = []
    await raw.send_json(initialize(0))
    await reply_to(raw, 0, seen)
    await raw.send_json(request(1, "session/new", {"cwd": str(workspace), "mcpServers": []}))
    session_id = (await reply_to(raw, 1, seen))["result"]["sessionId"]
    prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
    await raw.send_json(request(2, "session/prompt", prompt))
    failed = await reply_to(raw, 2, seen)
    await raw.send_json(request(3, "session/list", {}))
    listed = await reply_to(raw, 3, seen)
    assert listed["result"]["sessions"], listed
    return dict(failed["error"])


@pytest.mark.parametrize("path", ["direct", "litellm"])
async def test_a_provider_error_that_echoes_the_key_shows_it_nowhere(
    path: str, srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path, tmp_path: Path
) -> None:
    key = fresh_key()
    # A model on a wire the agent speaks goes through its own adapter; one of the long tail, through litellm.
    model = "openai/scripted" if path == "direct" else "custom_openai/scripted"
    srv.enqueue(*[Reply.error(500, ECHO, echo_key=True)] * 3)  # the first try and two retries, each logged
    env = agent_env(CODER_AGENT_API_KEY=key, CODER_AGENT_MODEL=model, CODER_AGENT_LOG_LEVEL="DEBUG")
    async with raw_agent(env, cwd=workspace, timeout=FIRST_PROMPT_TIMEOUT * 2) as raw:
        error = await _prompt_fails(raw, workspace)
        await raw.close_stdin()
        await raw.wait_exit(10)
        written = written_by_the_agent(raw, tmp_path / "home")
    assert len(srv.requests) == 3 and srv.requests[0].headers["authorization"] == f"Bearer {key}"
    agents = {request.headers.get("user-agent", "").split("/")[0] for request in srv.requests}
    # the direct path: httpx, and the early first call's plain socket (no user agent) if it came first
    assert agents <= ({"python-httpx", ""} if path == "direct" else {"AsyncOpenAI", "litellm"}), agents
    assert f"upstream refused the key {MASKED}" in error["message"]
    assert_nowhere(key, written)


@pytest.mark.parametrize("reply", ["error", "text"])
async def test_the_early_first_call_shows_no_key_in_its_text_nor_in_its_error(
    reply: str, srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path, tmp_path: Path
) -> None:
    key = fresh_key()
    if reply == "error":
        srv.enqueue(*[Reply.error(500, ECHO, echo_key=True)] * 3)
    else:  # a provider (or a proxy) that puts the key in the reply: the early stage streams it
        srv.enqueue(Reply.text("your key is ", key, " and that is all"))
    env, release = held_env(agent_env, tmp_path, CODER_AGENT_API_KEY=key, CODER_AGENT_LOG_LEVEL="DEBUG")
    seen: list[dict[str, Any]] = []
    async with raw_agent(env, cwd=workspace, timeout=FIRST_PROMPT_TIMEOUT * 2) as raw:
        await raw.send_json(initialize(0))
        await reply_to(raw, 0, seen)
        await raw.send_json(request(1, "session/new", {"cwd": str(workspace), "mcpServers": []}))
        session_id = (await reply_to(raw, 1, seen))["result"]["sessionId"]
        await announced_commands(raw)
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
        await raw.send_json(request(2, "session/prompt", prompt))
        if reply == "text":  # the three chunks come while the runtime's import is held: the early stage sent them
            early = [await raw.read_message(FIRST_PROMPT_TIMEOUT) for _ in range(3)]
            assert [m["params"]["update"]["content"]["text"] for m in early] == [
                "your key is ",
                MASKED,
                " and that is all",
            ]
        release.touch()
        done = await reply_to(raw, 2, seen)  # the text came whole: the early stage may have answered it
        await raw.send_json(request(3, "session/list", {}))
        await reply_to(raw, 3, seen)  # the runtime serves, and has kept the turn (store, log) by its own
        await raw.close_stdin()
        await raw.wait_exit(10)
        written = written_by_the_agent(raw, tmp_path / "home")
    assert srv.requests[0].headers["authorization"] == f"Bearer {key}"
    if reply == "error":
        assert f"upstream refused the key {MASKED}" in done["error"]["message"]
    else:
        assert done["result"]["stopReason"] == "end_turn"
        assert len(srv.requests) == 1  # the early call, taken over
    assert_nowhere(key, written)


def _cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "coder_agent", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_config_and_doctor_print_neither_secret_of_the_api_base(
    agent_env: EnvFactory, workspace: Path, tmp_path: Path
) -> None:
    password, query_key = "sekret", "sekret2"  # short: only where they stand in the URL are they known as secrets
    api_base = f"http://user:{password}@127.0.0.1:1/v1?key={query_key}"  # port 1: nothing answers
    env = agent_env(CODER_AGENT_API_BASE=api_base, CODER_AGENT_API_KEY=fresh_key())
    config = _cli(["config"], env, workspace)
    doctor = _cli(["doctor"], env, workspace)
    for ran in (config, doctor):
        assert password not in ran.stdout + ran.stderr
    shown = "http://user:[secret CODER_AGENT_API_BASE]@127.0.0.1:1/v1?key=[secret CODER_AGENT_API_BASE]"
    assert "CODER_AGENT_API_BASE" in config.stdout and shown in config.stdout
    assert doctor.returncode == 1 and shown in doctor.stdout and "connection refused" in doctor.stdout


async def test_serve_shows_what_it_made_for_clients_once_and_masks_it_from_then_on(
    srv: ScriptedModelServer, workspace: Path, tmp_path: Path
) -> None:
    client = RecordingClient()  # (the test's name holds no "token": `serve` waits for that word on stderr)
    async with serve(serve_env(tmp_path, srv, CODER_AGENT_LOG_LEVEL="DEBUG")) as served:
        found = re.search(r"token \(shown once.*\): (\S+)", served.text)
        assert found, served.text
        token = found.group(1)
        srv.enqueue(Reply.text("a client sent ", token))  # a reply that quotes it (a tool's output, say)
        transport = await create_websocket_stream(
            f"ws://127.0.0.1:{served.port}/acp", headers={"Authorization": f"Bearer {token}"}
        )
        conn = connect_to_agent(client, transport)
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await conn.prompt(session_id=session, prompt=[text_block("hi")])
        await conn.close()
    assert client.agent_text(session) == "a client sent [secret CODER_AGENT_SERVE_TOKEN]"
    assert served.text.count(token) == 1  # shown once, at start
    assert token not in (tmp_path / "home" / "logs" / "coder-agent.log").read_text()
    assert token.encode() not in b"".join(path.read_bytes() for path in (tmp_path / "home").glob("sessions.db*"))
