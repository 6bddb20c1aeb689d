"""`coder-agent run` as a real process: its exit code, and asking on a real terminal.

Everything else a run does is tested in this process (the other files here); Ctrl-C in test_cancel.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
from collections.abc import Callable
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


def plain(shown: str) -> str:
    """What a terminal showed, without its colours."""
    return re.sub(r"\x1b\[[0-9;]*m", "", shown)


async def answered_on_a_terminal(env: dict[str, str], workspace: Path, answer: bytes) -> tuple[int, str]:
    """`coder-agent run` on a terminal whose user answers the question about `touch asked.txt` with `answer`:
    (its exit code, what the terminal showed)."""
    return await on_a_terminal(
        env, workspace, "touch it", answer, lambda seen: b"touch asked.txt" in seen and b">" in seen
    )


async def on_a_terminal(
    env: dict[str, str], workspace: Path, prompt: str, answer: bytes, asked_when: Callable[[bytes], bool]
) -> tuple[int, str]:
    """`coder-agent run --prompt PROMPT` on a terminal whose user types `answer` once what the terminal shows
    satisfies `asked_when`: (its exit code, what the terminal showed)."""
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
            if asked_when(bytes(seen)):
                asked.set()

    try:
        async with anyio.create_task_group() as tasks:
            process = await anyio.open_process(
                [*CLI, "--prompt", prompt],
                stdin=child_end,
                stdout=subprocess.PIPE,
                stderr=child_end,
                env=env,
                cwd=workspace,
            )
            os.close(child_end)
            tasks.start_soon(read_terminal)
            async with process:
                with anyio.fail_after(RUN_TIMEOUT):
                    await asked.wait()
                    os.write(terminal, answer)
                    code = await process.wait()
            tasks.cancel_scope.cancel()
    finally:
        os.close(terminal)
    return code, seen.decode(errors="replace")


async def test_on_a_terminal_a_call_that_asks_is_asked_and_yes_runs_it(
    srv: ScriptedModelServer, cli_env: EnvFactory, workspace: Path, tmp_path: Path
) -> None:
    command = tool_call("run_command", {"command": "touch asked.txt"})
    srv.enqueue(Reply.tool_calls([command]), Reply.text("Done."))
    code, seen = await answered_on_a_terminal(cli_env(XDG_CONFIG_HOME=str(tmp_path / "config")), workspace, b"y\n")
    assert code == 0, seen
    assert (workspace / "asked.txt").exists()
    assert "Allow" in seen and "n  Reject  (Enter)" in plain(seen)
    assert tool_answer(srv).startswith("Exit code 0.")
    assert not (tmp_path / "config" / "coder-agent" / "rules.toml").exists()


async def test_on_a_terminal_the_models_question_is_asked_and_the_answer_reaches_it(
    srv: ScriptedModelServer, cli_env: EnvFactory, workspace: Path
) -> None:
    question = {
        "question": "Which database should the service use?",
        "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}],
    }
    srv.enqueue(Reply.tool_calls([tool_call("ask_user", {"questions": [question]})]), Reply.text("SQLite it is."))
    code, seen = await on_a_terminal(
        cli_env(), workspace, "set it up", b"2\n\n", lambda seen: b"2) SQLite" in seen and seen.rstrip().endswith(b">")
    )  # the second choice, and no note
    assert code == 0, seen
    assert 'Which database should the service use? → "SQLite"' in tool_answer(srv)


async def test_on_a_terminal_always_keeps_the_rule_its_legend_names(
    srv: ScriptedModelServer, cli_env: EnvFactory, workspace: Path, tmp_path: Path
) -> None:
    """Before: `a` showed "... in all projects" and picked "in this session": nothing was kept."""
    command = tool_call("run_command", {"command": "touch asked.txt"})
    srv.enqueue(Reply.tool_calls([command]), Reply.text("Done."))
    config = tmp_path / "config"
    code, seen = await answered_on_a_terminal(cli_env(XDG_CONFIG_HOME=str(config)), workspace, b"a\n")
    assert code == 0, seen
    assert "a  Always allow `touch` commands in this project" in plain(seen)
    rules = tomllib.loads((config / "coder-agent" / "rules.toml").read_text())["rule"]
    assert rules == [{"action": "allow", "tool": "run_command", "command": "touch", "project": str(workspace)}]
