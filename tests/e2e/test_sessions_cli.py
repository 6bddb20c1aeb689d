"""`python -m coder_agent sessions ...` on the home of an agent that recorded a real session."""

from __future__ import annotations

import json
from pathlib import Path
from subprocess import CompletedProcess

import anyio
import pytest

from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer
from tests.e2e.helpers import FIRST_PROMPT_TIMEOUT, REPO_ROOT, EnvFactory
from tests.e2e.session_helpers import open_session, prompt
from tests.support.acp_client import agent_command, base_env, spawn_agent

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


async def test_the_sessions_cli_lists_shows_exports_and_deletes_a_session_the_agent_recorded(
    srv: ScriptedModelServer, agent_env: EnvFactory, workspace: Path, tmp_path: Path
) -> None:
    env = agent_env()
    srv.enqueue(Reply.thinking_then_text(["Counting."], ["The answer ", "is 42."]))
    async with spawn_agent(env, cwd=workspace) as agent:
        with anyio.fail_after(FIRST_PROMPT_TIMEOUT):
            session_id = await open_session(agent, workspace)
            await prompt(agent, session_id, "What is the answer?")

    async def sessions(*args: str) -> CompletedProcess[bytes]:
        with anyio.fail_after(30):
            command = agent_command(["sessions", *args])
            return await anyio.run_process(command, env={**base_env(), **env}, cwd=workspace, check=False)

    listed = await sessions("list")
    assert listed.returncode == 0, listed.stderr
    assert f"{session_id}  " in listed.stdout.decode() and "What is the answer?" in listed.stdout.decode()
    as_json = json.loads((await sessions("list", "--json", "--cwd", str(workspace))).stdout)
    assert [(s["id"], s["title"]) for s in as_json] == [(session_id, "What is the answer?")]

    shown = await sessions("show", session_id)
    assert shown.returncode == 0, shown.stderr
    assert "> What is the answer?\n" in shown.stdout.decode()
    assert "\nThe answer is 42.\n" in shown.stdout.decode()
    assert "(thinking) Counting." in shown.stdout.decode()

    export = await sessions("export", session_id, "-o", str(tmp_path / "export.json"))
    assert export.returncode == 0, export.stderr
    exported = json.loads((tmp_path / "export.json").read_text())
    assert exported["session"]["id"] == session_id
    chunks = [u["content"]["text"] for u in exported["updates"] if u["sessionUpdate"] == "agent_message_chunk"]
    assert chunks == ["The answer ", "is 42."]
    assert [m["role"] for m in exported["messages"]] == ["user", "assistant"]

    deleted = await sessions("delete", session_id)
    assert (deleted.returncode, deleted.stdout.decode()) == (0, f"Deleted {session_id}\n")
    gone = await sessions("show", session_id)
    assert gone.returncode == 1
    assert f"unknown session {session_id}" in gone.stderr.decode() and b"Traceback" not in gone.stderr
    assert (await sessions("list")).stdout.decode() == "No saved sessions.\n"


async def test_on_a_fresh_install_the_sessions_cli_finds_no_sessions_and_creates_nothing(
    workspace: Path, tmp_path: Path
) -> None:
    user = tmp_path / "user"  # a new user: no CODER_AGENT_HOME, no XDG_DATA_HOME, nothing under ~/.local
    user.mkdir()
    env = {**base_env(), "PYTHONPATH": str(REPO_ROOT), "HOME": str(user)}
    store = user / ".local" / "share" / "coder-agent" / "sessions.db"

    async def sessions(*args: str) -> tuple[int, str, str]:
        with anyio.fail_after(30):
            done = await anyio.run_process(agent_command(["sessions", *args]), env=env, cwd=workspace, check=False)
        return done.returncode, done.stdout.decode(), done.stderr.decode()

    assert await sessions("list") == (0, f"No saved sessions yet (the agent creates {store} for the first one).\n", "")
    for command in (["show", "sess_x"], ["export", "sess_x"], ["delete", "sess_x"]):
        code, out, err = await sessions(*command)
        assert (code, out) == (1, ""), err
        assert err == f"coder-agent: unknown session sess_x: no sessions saved yet ({store} does not exist)\n"
    assert list(user.iterdir()) == []
