"""Modes and permissions of `coder-agent run`: what runs unasked, what is refused, and asking on a terminal."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import anyio
import pytest

from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.headless.helpers import CLI, RUN_TIMEOUT, EnvFactory, run_cli

pytestmark = pytest.mark.anyio


def tool_answer(srv: ScriptedModelServer, request: int = 1) -> str:
    """What the model read back about the tool call of the previous request."""
    message = srv.requests[request].body["messages"][-1]
    assert message["role"] == "tool", message
    return str(message["content"])


async def test_accept_edits_is_the_default_and_an_edit_lands_on_disk_with_its_diff_shown(
    srv: ScriptedModelServer, cli_env: EnvFactory, workspace: Path
) -> None:
    (workspace / "greet.py").write_text("print('hello')\n", encoding="utf-8")
    edit = tool_call("edit_file", {"path": "greet.py", "old_string": "hello", "new_string": "goodbye"})
    srv.enqueue(Reply.tool_calls([edit]), Reply.text("Edited."))
    ran = await run_cli(["--prompt", "say goodbye"], cli_env(), workspace)
    assert ran.code == 0, ran
    assert (workspace / "greet.py").read_text(encoding="utf-8") == "print('goodbye')\n"
    assert "-print('hello')" in ran.stdout
    assert "+print('goodbye')" in ran.stdout
    assert "updated greet.py" in tool_answer(srv)


async def test_yes_runs_commands_unasked(srv: ScriptedModelServer, cli_env: EnvFactory, workspace: Path) -> None:
    command = tool_call("run_command", {"command": "echo made > made.txt && echo visible-output"})
    srv.enqueue(Reply.tool_calls([command]), Reply.text("Ran it."))
    ran = await run_cli(["--yes", "--prompt", "run it"], cli_env(), workspace)
    assert ran.code == 0, ran
    assert (workspace / "made.txt").read_text(encoding="utf-8") == "made\n"
    assert "visible-output" in ran.stdout
    assert tool_answer(srv).startswith("Exit code 0.")


async def test_without_a_terminal_a_call_that_asks_is_rejected_and_the_output_says_so(
    srv: ScriptedModelServer, cli_env: EnvFactory, workspace: Path
) -> None:
    command = tool_call("run_command", {"command": "touch ran.txt"})
    srv.enqueue(Reply.tool_calls([command]), Reply.text("Could not."))
    ran = await run_cli(["--json", "--prompt", "run it"], cli_env(), workspace)
    assert ran.code == 0, ran
    assert not (workspace / "ran.txt").exists()
    [permission] = [line for line in ran.lines() if line["type"] == "permission"]
    assert permission["optionId"] == "reject_once"
    assert "rejected" in permission["note"]
    assert tool_answer(srv).startswith("Refused")


async def test_read_only_refuses_an_edit_tells_the_model_and_leaves_the_file(
    srv: ScriptedModelServer, cli_env: EnvFactory, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("keep me\n", encoding="utf-8")
    edit = tool_call("write_file", {"path": "notes.txt", "content": "gone\n"})
    srv.enqueue(Reply.tool_calls([edit]), Reply.text("I would change notes.txt."))
    ran = await run_cli(["--read-only", "--prompt", "rewrite notes"], cli_env(), workspace)
    assert ran.code == 0, ran
    assert (workspace / "notes.txt").read_text(encoding="utf-8") == "keep me\n"
    assert tool_answer(srv).startswith("Refused: Plan mode is read-only")
    assert "✗" in ran.stdout


async def test_on_a_terminal_a_call_that_asks_is_asked_and_yes_runs_it(
    srv: ScriptedModelServer, cli_env: EnvFactory, workspace: Path
) -> None:
    command = tool_call("run_command", {"command": "touch asked.txt"})
    srv.enqueue(Reply.tool_calls([command]), Reply.text("Done."))
    terminal, child_end = os.openpty()  # the CLI's stdin and stderr: a terminal
    seen = bytearray()
    asked = anyio.Event()

    async def read_terminal() -> None:
        while True:
            await anyio.wait_readable(terminal)
            try:
                seen.extend(os.read(terminal, 4096))
            except OSError:  # EIO: the CLI closed the terminal
                return
            if b"touch asked.txt" in seen and b">" in seen:
                asked.set()

    try:
        async with anyio.create_task_group() as tasks:
            process = await anyio.open_process(
                [*CLI, "--prompt", "touch it"],
                stdin=child_end,
                stdout=subprocess.PIPE,
                stderr=child_end,
                env=cli_env(),
                cwd=workspace,
            )
            os.close(child_end)
            tasks.start_soon(read_terminal)
            async with process:
                with anyio.fail_after(RUN_TIMEOUT):
                    await asked.wait()
                    os.write(terminal, b"y\n")
                    code = await process.wait()
            tasks.cancel_scope.cancel()
    finally:
        os.close(terminal)
    assert code == 0, seen.decode(errors="replace")
    assert (workspace / "asked.txt").exists()
    assert "Allow" in seen.decode(errors="replace")
    assert tool_answer(srv).startswith("Exit code 0.")
