"""`grep`, `glob` and `list_dir` through the protocol: the `ripgrep` setting chooses the rg (or none: the Python
search, said once in the log), and a `session/cancel` that ends a running search ends the rg it started."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from coder_agent.agent.workspace.ripgrep import locate
from coder_agent.config.settings import Settings
from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.driving import BackgroundPrompt, model_saw, open_session
from tests.support.inproc import inproc_agent
from tests.support.server_helpers import session

pytestmark = pytest.mark.anyio

CANCEL_DEADLINE = 2.0


def lay_out(workspace: Path) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "a.py").write_text("def target():\n    return 1\n")
    (workspace / ".gitignore").write_text("ignored/\n")
    (workspace / "ignored").mkdir()
    (workspace / "ignored" / "b.py").write_text("def target(): pass\n")


async def test_with_the_setting_pointing_at_no_rg_the_tools_search_in_python_and_say_so_once(
    srv: ScriptedModelServer,
    make_settings: Callable[..., Settings],
    workspace: Path,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    lay_out(workspace)
    calls = [tool_call("grep", {"pattern": "def target"}), tool_call("glob", {"pattern": "**/*.py"})]
    srv.enqueue(Reply.tool_calls([*calls, tool_call("list_dir", {})]), Reply.text("ok"))
    missing = tmp_path / "no-rg-here"
    caplog.set_level(logging.WARNING, "coder_agent.agent.workspace.ripgrep")
    async with session("bare", make_settings(ripgrep=str(missing)), workspace) as run:
        assert await run.prompt("look") == "end_turn"
        results = [call["statuses"][-1] for call in run.tool_calls().values()]
    assert results == ["completed", "completed", "completed"]
    told = model_saw(srv.requests[1].body)
    assert "src/a.py:1:def target():" in told and "ignored/b.py" not in told
    said = [record.getMessage() for record in caplog.records if "instead of ripgrep" in record.getMessage()]
    assert said == [f"searching with the built-in Python code instead of ripgrep: no rg at {missing}"]


async def test_the_tools_search_with_the_wheels_rg_by_default(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    lay_out(workspace)
    (workspace / ".rgignore").write_text("src/\n")  # only rg reads it
    srv.enqueue(Reply.tool_calls([tool_call("grep", {"pattern": "def target"})]), Reply.text("ok"))
    async with session("bare", settings, workspace) as run:
        assert await run.prompt("look") == "end_turn"
    assert "No matches in 2 files." in model_saw(srv.requests[1].body)  # .gitignore and .rgignore themselves


STAND_IN = """#!/bin/sh
# an rg that answers --version and then never finishes a search: only the agent can end it
if [ "$2" = "--version" ]; then exec {rg} "$@"; fi
echo $$ > {pidfile}
exec sleep 60
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def pid_in(pidfile: Path) -> int | None:
    text = pidfile.read_text() if pidfile.exists() else ""
    return int(text) if text.strip() else None


async def test_session_cancel_during_a_search_ends_the_rg_it_started(
    srv: ScriptedModelServer, make_settings: Callable[..., Settings], workspace: Path, tmp_path: Path
) -> None:
    pidfile = tmp_path / "rg.pid"
    rg = tmp_path / "slow-rg"
    rg.write_text(STAND_IN.format(rg=locate(None), pidfile=pidfile))
    rg.chmod(rg.stat().st_mode | stat.S_IXUSR)
    (workspace / "a.py").write_text("alpha\n")
    srv.enqueue(Reply.tool_calls([tool_call("grep", {"pattern": "alpha"})]), Reply.text("never asked"))
    async with inproc_agent(make_settings(ripgrep=str(rg))) as agent, anyio.create_task_group() as tasks:
        with anyio.fail_after(30):
            session_id = await open_session(agent, workspace)
            turn = BackgroundPrompt(agent, session_id, "search")
            tasks.start_soon(turn.run)
            while (pid := pid_in(pidfile)) is None:  # noqa: ASYNC110 (a process of its own sets no event)
                await anyio.sleep(0.02)
        assert alive(pid)
        await agent.conn.cancel(session_id=session_id)
        done = await turn.result(CANCEL_DEADLINE)
    assert done.stop_reason == "cancelled"
    assert not alive(pid), "the search's rg outlived the cancelled turn"
