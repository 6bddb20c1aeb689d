"""`coder-agent run` as a real process: its exit code, and asking on a real terminal.

Everything else a run does is tested in this process (the other files here); Ctrl-C in test_cancel.py.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import anyio
import pytest

from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.run_helpers import CLI, RUN_TIMEOUT, EnvFactory, run_cli, tool_answer

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


async def test_a_provider_error_exits_1_and_with_json_ends_with_an_error_line(
    srv: ScriptedModelServer, cli_env: EnvFactory, workspace: Path
) -> None:
    srv.enqueue(Reply.error(401, "Incorrect API key provided"))
    ran = await run_cli(["--json", "--prompt", "hi"], cli_env(), workspace)
    assert ran.code == 1, ran
    last = ran.lines()[-1]
    assert last["type"] == "error"
    assert "Incorrect API key provided" in last["message"]
    assert last["sessionId"].startswith("sess_")


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
