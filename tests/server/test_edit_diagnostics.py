"""Diagnostics after every edit, with a real Python language server (basedpyright), through the protocol: every line
the agent writes is checked against the ACP schema.

One agent, session and server serve the whole module (the server starts once: a few seconds). The editor keeps
the agent's writes in its unsaved buffers, as an editor may: the disk never sees them, so what the server
checks is the text the agent sent it. The crash test kills the module's server: it runs last.
"""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest
from acp.schema import WriteTextFileResponse

from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.driving import model_saw
from tests.support.editor_client import EditorClient
from tests.support.inproc import test_settings as agent_settings
from tests.support.language_servers import needs_basedpyright, running_in
from tests.support.processes import wait_gone
from tests.support.server_helpers import Run, session

pytestmark = [pytest.mark.anyio, needs_basedpyright]

TYPED = "def double(x: int) -> int:\n    return x * 2\n\n\nresult: str = double(2)\n"
BROKEN = 'import os\n\ncount: int = "many"\nundefined_call()\n'
MARKER = "venv-python-ran"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


class BufferingEditor(EditorClient):
    """An editor whose writes land in its buffers, unsaved (a new file is made on disk, empty)."""

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse | None:
        self.calls.append(("fs/write_text_file", {"path": path, "content": content}))
        await anyio.Path(path).touch()
        self.buffers[path] = content
        return WriteTextFileResponse()


@dataclass
class Shared:
    run: Run
    srv: ScriptedModelServer
    workspace: Path

    async def turn(self, *calls: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """One prompt whose model makes `calls` (one response), then stops: what the model was told of them,
        and the last call as the editor saw it."""
        self.srv.enqueue(Reply.tool_calls(list(calls)), Reply.text("ok"))
        before = len(self.run.tool_calls())
        assert await self.run.prompt("go", timeout=90) == "end_turn"
        shown = list(self.run.tool_calls().values())[before:]
        return told_this_turn(self.srv.requests[-1].body), shown[-1]


def told_this_turn(body: dict[str, Any]) -> str:
    """What the tool answers after the last prompt carried (the earlier turns' answers are in the history too)."""
    messages = body["messages"]
    prompt = max(index for index, message in enumerate(messages) if message["role"] == "user")
    return model_saw({"messages": messages[prompt:]})


@pytest.fixture(scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Shared]:
    base = tmp_path_factory.mktemp("diagnostics")
    workspace = base / "workspace"
    venv = workspace / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    python = venv / "bin" / "python"  # basedpyright runs a checkout's .venv python on its own: never here
    python.write_text(f'#!/bin/sh\ntouch {base / MARKER}\nexec python3 "$@"\n')
    python.chmod(0o755)
    (workspace / "broken.py").write_text(BROKEN)
    # A roomy wait: the server's start and first check take seconds on a busy machine (the bound is tested in
    # tests/lsp and tests/server/test_language_servers.py).
    with ScriptedModelServer() as srv:
        settings = agent_settings(base / "home", srv.url, language_servers=True, lsp_wait=60.0)
        async with anyio.create_task_group() as tasks:
            client = BufferingEditor(tasks)
            async with session("editor", settings, workspace, client=client) as run:
                assert running_in(workspace) == []  # nothing started for initialize or session/new
                yield Shared(run, srv, workspace)
            tasks.cancel_scope.cancel()
    assert not (base / MARKER).exists()


async def test_an_edit_that_introduces_a_type_error_gets_it_back_with_its_line(shared: Shared) -> None:
    told, call = await shared.turn(tool_call("write_file", {"path": "typed.py", "content": TYPED}))
    assert "created typed.py" in told
    assert "1 new problem (basedpyright):" in told
    [line] = [line for line in told.splitlines() if line.startswith("typed.py:")]
    assert line.startswith('typed.py:5:15: error: Type "int" is not assignable to declared type "str"')
    assert line.endswith("[reportAssignmentType]")
    assert call["statuses"][-1] == "completed"
    shown = [c["content"]["text"] for c in call["content"] if c["type"] == "content"]
    assert any(line in text for text in shown)  # the user sees it under the diff
    assert (shared.workspace / "typed.py").read_text() == ""  # it was in the editor's buffer only


async def test_an_edit_that_fixes_it_gets_no_new_problems(shared: Shared) -> None:
    await shared.turn(tool_call("write_file", {"path": "fixme.py", "content": TYPED}))
    edit = {"path": "fixme.py", "old_string": "result: str", "new_string": "result: int"}
    told, call = await shared.turn(tool_call("edit_file", edit))
    assert "updated fixme.py" in told
    assert "No new problems (basedpyright); 1 fixed." in told
    assert call["statuses"][-1] == "completed"


async def test_the_diagnostics_tool_lists_a_files_problems_in_plan_mode(shared: Shared) -> None:
    await shared.run.set_mode("plan")
    try:
        told, call = await shared.turn(tool_call("diagnostics", {"path": "broken.py"}))
    finally:
        await shared.run.set_mode("default")
    assert call["kind"] == "read" and call["statuses"][-1] == "completed"
    assert call["title"] == "Diagnostics of broken.py"
    assert "basedpyright: 2 problems in 1 of 1 file:" in told
    assert "broken.py:3:14: error: Type \"Literal['many']\" is not assignable" in told
    assert 'broken.py:4:1: error: "undefined_call" is not defined [reportUndefinedVariable]' in told


async def test_the_diagnostics_tool_looks_at_the_project(shared: Shared) -> None:
    told, _ = await shared.turn(tool_call("diagnostics", {}))
    assert "broken.py:4:1: error:" in told
    assert ".venv" not in told  # the project's files, not its virtual environment


async def test_a_commands_change_carries_the_problems_it_introduced(shared: Shared) -> None:
    command = "printf 'value: int = \"text\"\\n' > made_by_command.py"
    told, _ = await shared.turn(tool_call("run_command", {"command": command}))
    assert "Files changed by this call: made_by_command.py (created)" in told
    assert "made_by_command.py:1:14: error:" in told


async def test_a_crashed_server_does_not_fail_the_edit_and_is_said_once(shared: Shared) -> None:
    """Runs last: it kills the module's server."""
    told, _ = await shared.turn(tool_call("write_file", {"path": "crash.py", "content": "a = 1\n"}))
    assert "No new problems (basedpyright)." in told
    pids = running_in(shared.workspace)
    os.killpg(os.getpgid(pids[0]), signal.SIGKILL)  # the server's whole group (a wrapper runs node)
    assert not await wait_gone(pids)
    told, call = await shared.turn(tool_call("write_file", {"path": "crash.py", "content": "a: str = 1\n"}))
    assert "updated crash.py" in told and call["statuses"][-1] == "completed"
    assert "basedpyright stopped (it was killed by SIGKILL" in told
    told, call = await shared.turn(tool_call("write_file", {"path": "crash.py", "content": "a: str = 2\n"}))
    assert told.strip() == "updated crash.py" and call["statuses"][-1] == "completed"
    assert shared.run.client.buffers[str(shared.workspace / "crash.py")] == "a: str = 2\n"
