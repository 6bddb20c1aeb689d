"""`coder-agent serve` as a user runs it, and `coder-agent acp` untouched by it (real processes)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import anyio
import httpx
import pytest
from acp import PROTOCOL_VERSION, connect_to_agent, text_block
from acp.ws import create_websocket_stream

from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.recording_client import RecordingClient
from tests.support.served import agent_env, serve

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]
SERVE_ONLY = ("starlette", "uvicorn", "websockets", "coder_agent.remote")


async def test_serve_shows_where_it_listens_and_a_new_token_once_and_serves_a_prompt_with_it(
    tmp_path: Path, srv: ScriptedModelServer, workspace: Path
) -> None:
    srv.enqueue(Reply.text("served"))
    client = RecordingClient()
    async with serve(agent_env(tmp_path, srv)) as served:
        token = re.search(r"token \(shown once.*\): (\S+)", served.text)
        assert token, served.text
        base = f"http://127.0.0.1:{served.port}"
        async with httpx.AsyncClient() as http:
            health = await http.get(f"{base}/health")
            refused = await http.post(f"{base}/acp", content=b"{}", headers={"content-type": "application/json"})
        transport = await create_websocket_stream(
            f"ws://127.0.0.1:{served.port}/acp", headers={"Authorization": f"Bearer {token.group(1)}"}
        )
        conn = connect_to_agent(client, transport)
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        response = await conn.prompt(session_id=session, prompt=[text_block("hi")])
        await conn.close()
    assert served.process.returncode == 0, served.text
    assert health.status_code == 200 and refused.status_code == 401
    assert response.stop_reason == "end_turn" and client.agent_text(session) == "served"
    assert served.text.count(token.group(1)) == 1
    log = (tmp_path / "home" / "logs" / "coder-agent.log").read_text()
    assert "connection" in log and token.group(1) not in log


async def test_serve_takes_its_token_from_the_settings_and_warns_when_reachable_from_other_machines(
    tmp_path: Path, srv: ScriptedModelServer
) -> None:
    env = agent_env(tmp_path, srv, CODER_AGENT_SERVE_TOKEN="from-the-settings-0123")
    async with serve(env, "--host", "0.0.0.0") as served:
        base = f"http://127.0.0.1:{served.port}/acp"
        initialize = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
        async with httpx.AsyncClient(headers={"content-type": "application/json"}) as http:
            without = await http.post(base, content=initialize)
            generated = await http.post(base, content=initialize, headers={"authorization": "Bearer x"})
            ok = await http.post(base, content=initialize, headers={"authorization": "Bearer from-the-settings-0123"})
    assert [without.status_code, generated.status_code, ok.status_code] == [401, 401, 200]
    assert "CODER_AGENT_SERVE_TOKEN" in served.text and "from-the-settings-0123" not in served.text
    assert "reachable from other machines" in served.text and "TLS reverse proxy" in served.text


async def test_the_editor_path_imports_nothing_of_the_server(
    tmp_path: Path, srv: ScriptedModelServer, workspace: Path
) -> None:
    srv.enqueue(Reply.text("hello"))
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(workspace), "mcpServers": []}},
    ]
    command = [sys.executable, "-X", "importtime", "-m", "coder_agent", "acp"]
    async with await anyio.open_process(
        command, env=agent_env(tmp_path, srv), cwd=workspace, stderr=subprocess.PIPE
    ) as process:
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        stderr = b""

        async def drain() -> None:
            nonlocal stderr
            async for chunk in process.stderr:  # type: ignore[union-attr]
                stderr += chunk

        async with anyio.create_task_group() as group:
            group.start_soon(drain)
            out = b""
            for line in lines:
                await process.stdin.send(json.dumps(line).encode() + b"\n")
            with anyio.fail_after(30):
                async for chunk in process.stdout:
                    out += chunk
                    if b'"id":2' in out and out.endswith(b"\n"):
                        break
            session = next(json.loads(x) for x in out.splitlines() if b'"id":2' in x)["result"]["sessionId"]
            prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}
            await process.stdin.send(
                json.dumps({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt}).encode() + b"\n"
            )
            with anyio.fail_after(60):
                async for chunk in process.stdout:
                    out += chunk
                    if b'"id":3' in out:
                        break
            await process.stdin.aclose()
            with anyio.fail_after(30):
                await process.wait()
    assert b'"stopReason":"end_turn"' in out
    imported = {line.split("|")[-1].strip() for line in stderr.decode().splitlines() if line.startswith("import time:")}
    assert "litellm" in imported or "coder_agent.llm.fast_start" in imported  # the check sees the turn's imports
    assert not [name for name in imported if name.split(".")[0] in SERVE_ONLY or name.startswith(SERVE_ONLY)]


async def test_the_token_is_never_logged_even_at_debug_level(
    tmp_path: Path, srv: ScriptedModelServer, workspace: Path
) -> None:
    token = "never-in-the-log-0123456789"
    env = agent_env(tmp_path, srv, CODER_AGENT_SERVE_TOKEN=token, CODER_AGENT_LOG_LEVEL="DEBUG")
    auth = {"Authorization": f"Bearer {token}"}
    async with serve(env) as served:
        transport = await create_websocket_stream(f"ws://127.0.0.1:{served.port}/acp", headers=auth)
        conn = connect_to_agent(RecordingClient(), transport)
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.close()
        initialize = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
        async with httpx.AsyncClient(headers={"content-type": "application/json", **auth}) as http:
            posted = await http.post(f"http://127.0.0.1:{served.port}/acp", content=initialize)
    log = (tmp_path / "home" / "logs" / "coder-agent.log").read_text()
    assert posted.status_code == 200
    assert " DEBUG " in log  # debug logging was on
    assert token not in log and token not in served.text
