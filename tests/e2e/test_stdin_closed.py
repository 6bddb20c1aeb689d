"""Closing the agent's stdin ends the process within half a second, whatever it is doing, and loses nothing.

Clients end an agent by closing its stdin (the official TCK's ACP-SHUTDOWN-001 times it). The stages: before and
after `initialize`, right after the early `session/new` (the runtime's import held in its thread, the take-over
pending), while the early first call streams, during a turn of the full agent, with MCP servers starting or
refusing to stop. What the client was shown is kept: the early session and the early turn are saved as the full
agent would have saved them.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.acp_client import RawAgent, raw_agent
from tests.support.agent_env import FIRST_PROMPT_TIMEOUT, REPO_ROOT, EnvFactory, initialize, request
from tests.support.early_stage import EXIT_WITHIN, chunks, closed_stdin_exit, held_env, held_messages, reply_to, start
from tests.support.mcp_servers import SERVERS, new_tag, processes_with
from tests.support.processes import read_fifo, wait_gone

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


async def new_session(raw: RawAgent, cwd: Path, request_id: int = 1, servers: list[Any] | None = None) -> str:
    await raw.send_json(request(request_id, "session/new", {"cwd": str(cwd), "mcpServers": servers or []}))
    reply = await reply_to(raw, request_id, [])
    session_id: str = reply["result"]["sessionId"]
    return session_id


async def _timed(code: str, env: dict[str, str], cwd: Path) -> float:
    started = anyio.current_time()
    with anyio.fail_after(60):
        await anyio.run_process([sys.executable, "-c", code], env=env, cwd=cwd)
    return anyio.current_time() - started


async def start_up_time(env: dict[str, str], cwd: Path) -> float:
    """How long this interpreter takes, now, to start and import what the agent reads its first line with."""
    return await _timed("import coder_agent.cli.main, coder_agent.cli.acp, coder_agent.prestart.early", env, cwd)


async def saving_time(env: dict[str, str], cwd: Path, home: Path) -> float:
    """How long saving a first session takes on this machine now (importing SQLite, creating its file, syncing it),
    past the interpreter's own start: what an agent exiting before its runtime is in pays to keep the session."""
    store = str(home / "sessions.db")  # its folder is made as the agent makes it
    save = f"from coder_agent.store.sqlite import SqliteSessionStore as S; import pathlib; S(pathlib.Path({store!r}))"
    with_save, bare = await _timed(save, env, cwd), await _timed("pass", env, cwd)
    return max(0.0, with_save - bare)


async def test_before_initialize(agent_env: EnvFactory, workspace: Path) -> None:
    """Its start-up is timed too: under load that alone can take longer than the half second, so the deadline is
    the half second past the start-up of the same interpreter with the same imports, measured just before."""
    start_up = await start_up_time(agent_env(), workspace)
    async with raw_agent(agent_env(), cwd=workspace) as raw:
        elapsed = await closed_stdin_exit(raw)  # its start-up included
    assert elapsed < EXIT_WITHIN + start_up, f"{elapsed:.2f} s (start-up alone: {start_up:.2f} s)"


async def test_after_initialize(agent_env: EnvFactory, workspace: Path) -> None:
    async with raw_agent(agent_env(), cwd=workspace) as raw:
        await raw.send_json(initialize(0))
        await raw.read_message(FIRST_PROMPT_TIMEOUT)
        elapsed = await closed_stdin_exit(raw)
    assert elapsed < EXIT_WITHIN, f"{elapsed:.2f} s"


async def test_right_after_the_early_session_new_the_session_is_saved_and_the_import_not_waited_for(
    agent_env: EnvFactory, workspace: Path, tmp_path: Path
) -> None:
    """The session is saved before the exit: on a loaded machine creating the store alone (an fsync) can take
    longer than the half second, so the deadline is the half second past that cost, measured just before."""
    save = await saving_time(agent_env(), workspace, tmp_path / "calibration")
    env, _ = held_env(agent_env, tmp_path)  # never released: the runtime stays out, the take-over pending
    async with raw_agent(env, cwd=workspace) as raw:
        await raw.send_json(initialize(0))
        await raw.read_message(FIRST_PROMPT_TIMEOUT)
        session_id = await new_session(raw, workspace)
        elapsed = await closed_stdin_exit(raw)
    assert elapsed < EXIT_WITHIN + save, f"{elapsed:.2f} s (saving a first session alone: {save:.2f} s)"
    async with raw_agent(agent_env(), cwd=workspace) as raw:  # the session is there, as the full agent keeps it
        await raw.send_json(initialize(0))
        await raw.send_json(request(1, "session/list", {}))
        listed = (await reply_to(raw, 1, []))["result"]["sessions"]
        load = {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []}
        await raw.send_json(request(2, "session/load", load))
        loaded = await reply_to(raw, 2, [])
    assert [info["sessionId"] for info in listed] == [session_id]
    assert loaded["result"]["modes"]["currentModeId"] == "default"


def rows(home: Path) -> dict[str, list[Any]]:
    """The store's rows, with what differs between two runs (ids, times) named instead of given."""
    with sqlite3.connect(home / "sessions.db") as db:
        tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        found = {
            table: [
                [value.decode() if isinstance(value, bytes) else value for value in row]
                for row in db.execute(f"SELECT * FROM {table} ORDER BY 1, 2")
            ]
            for table in tables
        }
    text = json.dumps(found)
    for row in found["sessions"]:
        text = text.replace(row[0], "SESSION")
    for update in found["updates"]:  # (session_id, seq, body)
        message_id = json.loads(update[2]).get("messageId")
        if message_id:
            text = text.replace(message_id, "MESSAGE")
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", "TIME", text)
    return dict(json.loads(text))


async def test_while_the_early_first_call_streams_the_turn_is_saved_as_a_cancel_would_save_it(
    srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path, tmp_path: Path
) -> None:
    """The early stage showed text the full agent never saw: it saves the turn as the full agent does when a
    cancel ends it during the early reply (the same rows), and a later load and prompt carry it on."""
    srv.enqueue(Reply.stall(30, after_text=["Thinking ", "about it"]))
    env, _ = held_env(agent_env, tmp_path)
    async with raw_agent(env, cwd=workspace) as raw:
        session_id = await start(raw, workspace, "take your time")
        shown = await held_messages(raw, 2)
        elapsed = await closed_stdin_exit(raw)
    assert elapsed < EXIT_WITHIN, f"{elapsed:.2f} s"
    assert [c["content"]["text"] for c in chunks(shown)] == ["Thinking ", "about it"]
    saved = rows(tmp_path / "home")

    # The full agent's own record of the same turn, ended by a cancel during the early reply.
    srv.enqueue(Reply.stall(30, after_text=["Thinking ", "about it"]))
    other = tmp_path / "other"
    other.mkdir()
    env, release = held_env(agent_env, other, CODER_AGENT_HOME=str(other / "home"))
    async with raw_agent(env, cwd=workspace) as raw:
        cancelled = await start(raw, workspace, "take your time")
        await held_messages(raw, 2)
        await raw.send_json({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": cancelled}})
        release.touch()
        assert (await reply_to(raw, 2, []))["result"]["stopReason"] == "cancelled"
    # The turn's record for undo: the full agent keeps it when the cancel lands after its turn took the early
    # call over (as it mostly does), not when it lands before; either way nothing else differs.
    theirs = rows(other / "home")
    assert saved.pop("turns") == [["SESSION", 1, 0, 0, 0, 0, None]]  # no notes for the model
    assert theirs.pop("turns") in ([["SESSION", 1, 0, 0, 0, 0, None]], [])
    assert saved == theirs

    # And it carries on: a load replays what was shown, and the model sees it with the next prompt.
    srv.enqueue(Reply.text("Done."))
    async with raw_agent(agent_env(), cwd=workspace) as raw:
        seen: list[dict[str, Any]] = []
        await raw.send_json(initialize(0))
        await raw.send_json(
            request(1, "session/load", {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []})
        )
        await reply_to(raw, 1, seen)
        follow = {"sessionId": session_id, "prompt": [{"type": "text", "text": "well?"}]}
        await raw.send_json(request(2, "session/prompt", follow))
        await reply_to(raw, 2, seen)
    assert [c["content"]["text"] for c in chunks(seen)][:2] == ["Thinking ", "about it"]
    assert srv.requests[-1].body["messages"][1:] == [
        {"role": "user", "content": "take your time"},
        {"role": "assistant", "content": "Thinking about it"},
        {"role": "user", "content": "well?"},
    ]


async def test_during_a_turn_of_the_full_agent(
    srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path
) -> None:
    srv.enqueue(Reply.stall(30, after_text=["Partial "]))
    async with raw_agent(agent_env(), cwd=workspace) as raw:
        await raw.send_json(initialize(0))
        session_id = await new_session(raw, workspace)
        await raw.send_json(request(2, "session/list", {}))  # once answered, the full agent serves
        await reply_to(raw, 2, [])
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
        await raw.send_json(request(3, "session/prompt", prompt))
        while chunks([await raw.read_message(FIRST_PROMPT_TIMEOUT)]) == []:
            pass
        elapsed = await closed_stdin_exit(raw)
        hung_up = await anyio.to_thread.run_sync(lambda: srv.wait_disconnect(5))
    assert elapsed < EXIT_WITHIN, f"{elapsed:.2f} s"
    assert hung_up


# An MCP server that neither stops when its input ends nor on SIGTERM (only SIGKILL ends it); says when it runs.
DEAF = """
import signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
with open(sys.argv[1], "w") as fifo:
    fifo.write("up")
sys.stdin.close()
time.sleep(60)
"""


@pytest.mark.parametrize("server", ["starting", "up", "deaf"])
async def test_with_mcp_servers_and_no_child_is_left(
    server: str, agent_env: EnvFactory, workspace: Path, tmp_path: Path
) -> None:
    """starting: the mcp SDK still being imported in its thread; up: a real server, connected; deaf: one that
    ignores both the end of its input and SIGTERM."""
    tag = new_tag()
    fifo = tmp_path / "deaf-up"
    os.mkfifo(fifo)
    args = [SERVERS, "stdio", "--tag", tag] if server != "deaf" else ["-c", DEAF, str(fifo), tag]
    servers = [{"name": "docs", "command": sys.executable, "args": args, "env": []}]
    async with raw_agent(agent_env(), cwd=workspace) as raw:
        await raw.send_json(initialize(0))
        await raw.read_message(FIRST_PROMPT_TIMEOUT)
        await new_session(raw, workspace, servers=servers)  # answered by the full agent
        if server == "up":  # its prompts announced: connected
            while "mcp__docs__" not in json.dumps(await raw.read_message(30)):
                pass
        elif server == "deaf":
            assert await read_fifo(fifo, timeout=30) == "up"
        children = processes_with(tag)
        elapsed = await closed_stdin_exit(raw)
    assert elapsed < EXIT_WITHIN, f"{elapsed:.2f} s"
    assert children != [] or server == "starting"
    assert await wait_gone(children, timeout=5) == []  # SIGKILL, where it takes one, is not instant either


SAVE_EARLY = """
import sys
from coder_agent.prestart.early import EarlyRead
from coder_agent.prestart import early_exit
from coder_agent.prestart.early_session import EarlySession

session = EarlySession("sess_1", sys.argv[1], [], "default", "openai/x", {}, sys.argv[2])
session.prompt = (b"{}\\n", ["hello"])
early = EarlyRead(b"{}\\n", {}, eof=True)
early.answered = session
assert early_exit.nothing_left(early)
early_exit.keep(early)
print(sorted({name.split(".")[0] for name in sys.modules} & {"pydantic", "anyio", "httpx", "litellm", "mcp"}))
"""


def test_saving_what_the_early_stages_showed_needs_no_runtime_library(workspace: Path, tmp_path: Path) -> None:
    """The early exit must stay as light as the early stages: the standard library and the store alone."""
    done = subprocess.run(
        [sys.executable, "-c", SAVE_EARLY, str(workspace), str(tmp_path / "home")],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        check=True,
    )
    assert done.stdout.strip() == "[]", done.stderr
    with sqlite3.connect(tmp_path / "home" / "sessions.db") as db:
        assert db.execute("SELECT id, title FROM sessions").fetchall() == [("sess_1", "hello")]
