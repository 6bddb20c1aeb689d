"""The agent as an OS process: stdout is the protocol's alone, stdin EOF ends it, its commands never read the
protocol pipe, bad settings are named."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import anyio
import pytest
from acp import PROTOCOL_VERSION, text_block
from anyio.abc import SocketAttribute

from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.acp_client import RecordingClient, raw_agent, spawn_agent
from tests.support.agent_env import FIRST_PROMPT_TIMEOUT, REPO_ROOT, EnvFactory
from tests.support.driving import initialize, model_saw, open_session, prompt, request

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

JUNK_ROUNDS = 8

# Loaded by the agent's interpreter at start-up: a thread connects to the test, waits for its "go" (sent once
# the agent has answered `initialize`), writes junk to stdout every way it can, then reports "done".
SITECUSTOMIZE = f"""
import os, socket, threading

def _junk():
    with socket.create_connection(("127.0.0.1", int(os.environ["JUNK_PORT"])), timeout=60) as test:
        if test.recv(2) != b"go":
            return
        tick = threading.Event()
        for i in range({JUNK_ROUNDS}):
            print(f"JUNK print {{i}}", flush=True)
            os.write(1, f"RAW JUNK {{i}}\\n".encode())
            os.system(f"echo CHILD JUNK {{i}}")
            tick.wait(0.1)
        test.sendall(b"done")

if os.environ.get("JUNK_PORT"):
    threading.Thread(target=_junk, daemon=True).start()
"""


def live_children(pid: int) -> list[int]:
    """Pids whose parent is `pid` and that are not zombies, from /proc."""
    children = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if int(ppid) == pid and state != "Z":
            children.append(int(entry.name))
    return children


def is_running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def test_junk_written_to_stdout_by_prints_raw_writes_and_children_lands_on_stderr(
    srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(textwrap.dedent(SITECUSTOMIZE), encoding="utf-8")
    srv.enqueue(Reply.text("Clean ", "reply"))
    async with await anyio.create_tcp_listener(local_host="127.0.0.1") as listener:
        [tcp] = listener.listeners
        port = str(tcp.extra(SocketAttribute.local_port))
        env = agent_env(PYTHONPATH=f"{site}{os.pathsep}{REPO_ROOT}", JUNK_PORT=port)
        async with spawn_agent(env, cwd=workspace) as agent:
            with anyio.fail_after(FIRST_PROMPT_TIMEOUT):
                init = await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
                async with await tcp.accept() as junk_thread:
                    await junk_thread.send(b"go")
                    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
                    done = await agent.conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
                    assert await junk_thread.receive() == b"done"
            stderr = agent.stderr_text()
    assert init.protocol_version == 1 and done.stop_reason == "end_turn"
    assert agent.client.agent_text(session.session_id) == "Clean reply"
    for i in range(JUNK_ROUNDS):
        for junk in (f"JUNK print {i}\n", f"RAW JUNK {i}\n", f"CHILD JUNK {i}\n"):
            assert junk in stderr
    assert not any(b"JUNK" in line for line in agent.agent_lines)  # and the harness checked every line


async def test_closing_stdin_during_a_stalled_stream_ends_the_process_quickly_and_leaves_no_child(
    srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path
) -> None:
    srv.enqueue(Reply.stall(30, after_text=["Partial "]))
    async with raw_agent(agent_env(), cwd=workspace) as raw:
        await raw.send_json(initialize(0))
        await raw.send_json(request(1, "session/new", {"cwd": str(workspace), "mcpServers": []}))
        await raw.read_message()
        session_id = (await raw.read_message())["result"]["sessionId"]
        await raw.send_json(
            request(2, "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]})
        )
        with anyio.fail_after(FIRST_PROMPT_TIMEOUT):  # the reply has begun (the commands came before it)
            while (await raw.read_message(FIRST_PROMPT_TIMEOUT)).get("params", {}).get("update", {}).get(
                "sessionUpdate"
            ) != "agent_message_chunk":
                pass
        children = live_children(raw.proc.pid)
        started = anyio.current_time()
        await raw.close_stdin()
        code = await raw.wait_exit(timeout=5)
        elapsed = anyio.current_time() - started
        hung_up = await anyio.to_thread.run_sync(lambda: srv.wait_disconnect(5))
    assert code == 0
    assert elapsed < 1.5, f"the agent took {elapsed:.2f} s to exit after stdin closed"
    assert [pid for pid in children if is_running(pid)] == []
    assert hung_up, "the model's HTTP stream outlived the agent"


async def test_a_local_command_cannot_read_the_protocol_pipe_its_stdin_is_closed(
    srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path
) -> None:
    srv.enqueue(
        Reply.tool_calls([tool_call("run_command", {"command": "read x; echo got:[$x]; cat; echo end"})]),
        Reply.text("ok"),
    )
    env = agent_env(CODER_AGENT_DEFAULT_MODE="bypass")
    async with spawn_agent(env, client=RecordingClient(), cwd=workspace) as agent:
        with anyio.fail_after(FIRST_PROMPT_TIMEOUT):
            session_id = await open_session(agent, workspace)
            assert await prompt(agent, session_id, "run it") == "end_turn"
    told = model_saw(srv.requests[1].body)
    assert "got:[]" in told and "end" in told


async def test_an_invalid_setting_keeps_the_agent_up_and_refuses_what_needs_it_naming_it(
    agent_env: EnvFactory, workspace: Path
) -> None:
    """An editor shows an agent that exits as merely dead: it stays up and says what to fix instead."""
    env = agent_env(CODER_AGENT_MAX_RETRIES=None, CODER_AGENT_DEFAULT_MODE="yolo")
    user_dotenv = Path(env["XDG_CONFIG_HOME"]) / "coder-agent" / ".env"  # the user's own; the workspace's is ignored
    user_dotenv.parent.mkdir(parents=True)
    user_dotenv.write_text("CODER_AGENT_MAX_RETRIES=lots\n", encoding="utf-8")
    async with raw_agent(env, cwd=workspace) as raw:
        await raw.send_json(initialize(0))
        assert "result" in await raw.read_message()
        await raw.send_json(request(1, "session/new", {"cwd": str(workspace), "mcpServers": []}))
        refused = await raw.read_message(timeout=30)
        await raw.send_json(request(2, "session/list", {}))
        listed = await raw.read_message(timeout=30)
        stderr = raw.stderr_text()
    assert refused["id"] == 1 and "CODER_AGENT_DEFAULT_MODE" in refused["error"]["message"]
    assert "ask, default, accept-edits, plan, bypass" in refused["error"]["message"]
    assert refused["error"]["data"]["settings"] == ["CODER_AGENT_DEFAULT_MODE"]
    assert refused["error"]["data"]["details"] == refused["error"]["message"]
    assert listed["id"] == 2 and listed["result"] == {"sessions": []}
    assert "CODER_AGENT_MAX_RETRIES" in stderr and "CODER_AGENT_DEFAULT_MODE" in stderr
