"""Local terminals: real /bin/sh processes, their process groups, stdin, output limits, kill, release, credentials."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import anyio
import pytest

from coder_agent.acp.schema import TerminalExitStatus
from coder_agent.agent.errors import ClientError
from coder_agent.local.process_groups import kill_group, live_members
from coder_agent.local.terminals import LocalTerminals

from ..support.commands import SESSION, run
from ..support.processes import alive, alive_in_group, fifo, read_fifo

pytestmark = pytest.mark.anyio
__all__ = ["fifo"]  # a fixture


async def test_exit_code_and_both_streams_are_reported_in_order(tmp_path: Path) -> None:
    result = await run("echo out; echo err >&2; echo more; exit 3", tmp_path)
    assert result.status == TerminalExitStatus(exit_code=3)
    assert result.output == "out\nerr\nmore\n"
    assert (result.truncated, result.dropped) == (False, 0)


async def test_a_command_killed_by_a_signal_reports_its_name(tmp_path: Path) -> None:
    result = await run("kill -KILL $$", tmp_path)
    assert result.status == TerminalExitStatus(signal="SIGKILL")


async def test_it_runs_in_cwd_with_extra_environment(tmp_path: Path) -> None:
    command = 'pwd; echo "$GREETING"; command -v ls >/dev/null && echo path-ok'
    result = await run(command, tmp_path, env={"GREETING": "hi"})
    assert result.output.splitlines() == [str(tmp_path), "hi", "path-ok"]


@pytest.mark.parametrize(("command", "output"), [("read x; echo got:$x", "got:\n"), ("cat", ""), ("head -c 1", "")])
async def test_reading_stdin_gets_end_of_file_at_once(tmp_path: Path, command: str, output: str) -> None:
    result = await run(command, tmp_path)
    assert (result.status.exit_code, result.output, result.killed) == (0, output, False)


async def test_output_over_the_limit_keeps_the_end_and_counts_what_was_dropped(tmp_path: Path) -> None:
    result = await run("yes line | head -n 5000; echo END", tmp_path, limit=1000)
    assert result.status.exit_code == 0
    assert len(result.output) == 1000
    assert result.output.endswith("line\nEND\n")
    assert result.dropped == 5000 * 5 + 4 - 1000
    assert result.truncated


async def test_a_cut_through_a_multibyte_character_is_not_shown_as_garbage(tmp_path: Path) -> None:
    result = await run("printf 'ééééé'", tmp_path, limit=5)  # 10 bytes: the cut falls inside an é
    assert result.output == "éé"


async def test_a_kill_ends_the_whole_process_group_and_the_output_stays_readable(tmp_path: Path) -> None:
    result = await run("sleep 30 & echo $$ $!; sleep 30", tmp_path, timeout=0.5)
    assert result.killed
    assert result.status == TerminalExitStatus(signal="SIGTERM")
    pgid, background = map(int, result.output.split())
    assert alive_in_group(pgid) == []
    assert not alive(background)


async def test_background_jobs_neither_block_the_exit_nor_outlive_the_command(tmp_path: Path) -> None:
    result = await run("sleep 30 & echo $$ $!", tmp_path)
    assert (result.status.exit_code, result.killed) == (0, False)
    pgid, background = map(int, result.output.split())
    assert alive_in_group(pgid) == []
    assert not alive(background)


async def test_releasing_a_running_terminal_kills_its_group_and_forgets_it(tmp_path: Path, fifo: Path) -> None:
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            terminals = LocalTerminals(tasks)
            command = f"sleep 30 & echo $$ $! > {fifo}; wait"
            terminal = await terminals.create_terminal(SESSION, "/bin/sh", ["-c", command], cwd=str(tmp_path))
            pgid, background = map(int, (await read_fifo(fifo)).split())
            assert alive_in_group(pgid)
            await terminals.release_terminal(SESSION, terminal)
            assert alive_in_group(pgid) == [] and not alive(background)
            with pytest.raises(ClientError, match="unknown terminal"):
                await terminals.terminal_output(SESSION, terminal)


async def test_when_the_owners_task_group_ends_the_running_groups_die_with_it(tmp_path: Path, fifo: Path) -> None:
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            terminals = LocalTerminals(tasks)
            command = f"sleep 30 & echo $$ $! > {fifo}; wait"
            await terminals.create_terminal(SESSION, "/bin/sh", ["-c", command], cwd=str(tmp_path))
            pgid, background = map(int, (await read_fifo(fifo)).split())
            tasks.cancel_scope.cancel()
    assert alive_in_group(pgid) == []
    assert not alive(background)


async def test_kill_group_escalates_to_sigkill_when_sigterm_is_ignored(tmp_path: Path) -> None:
    process = await anyio.open_process(
        ["/bin/sh", "-c", "trap '' TERM; sleep 30 & echo ready; wait"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    async with process:
        assert process.stdout is not None
        with anyio.fail_after(5):
            assert await process.stdout.receive() == b"ready\n"
            await kill_group(process.pid, grace=0.2)
            assert live_members(process.pid) == alive_in_group(process.pid) == []
            assert await process.wait() == -9


async def test_kill_group_of_a_finished_group_is_a_no_op() -> None:
    done = await anyio.run_process(["/bin/sh", "-c", "echo $$"], stdin=subprocess.DEVNULL, start_new_session=True)
    with anyio.fail_after(1):
        await kill_group(int(done.stdout))


async def test_a_missing_cwd_raises_oserror_and_leaves_no_terminal(tmp_path: Path) -> None:
    async with anyio.create_task_group() as tasks:
        terminals = LocalTerminals(tasks)
        with pytest.raises(OSError):
            await terminals.create_terminal(SESSION, "/bin/sh", ["-c", "true"], cwd=str(tmp_path / "missing"))
        assert terminals.live_ids() == []


AGENT_VARIABLES = {
    "CODER_AGENT_API_KEY": "sk-agent-own-key-0001",
    "CODER_AGENT_API_BASE": "http://127.0.0.1:9/v1",
    "OPENAI_API_KEY": "sk-openai-key-0002",
    "ANTHROPIC_API_KEY": "sk-ant-key-0003",
    "AZURE_OPENAI_API_KEY": "azure-key-0004",
    "MY_COPY_OF_THE_KEY": "sk-openai-key-0002",  # a custom name for a key the agent holds
}
USER_VARIABLES = {"GITHUB_TOKEN": "ghp_users_own", "AWS_ACCESS_KEY_ID": "AKIAUSERSOWN", "PROJECT_MODE": "none"}


async def test_a_command_sees_none_of_the_agents_credentials_but_the_users_own_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in {**AGENT_VARIABLES, **USER_VARIABLES}.items():
        monkeypatch.setenv(name, value)
    result = await run("env -0", tmp_path, env={"GREETING": "hi"})
    seen = dict(entry.split("=", 1) for entry in result.output.split("\0") if "=" in entry)
    assert sorted(set(AGENT_VARIABLES) & set(seen)) == []
    assert not [value for value in AGENT_VARIABLES.values() if value in result.output]
    assert USER_VARIABLES.items() <= seen.items()
    assert seen["GREETING"] == "hi" and seen["PATH"] == os.environ["PATH"]


async def test_a_given_environment_is_used_without_the_agents_credentials(tmp_path: Path) -> None:
    given = {"PATH": os.environ["PATH"], "EVAL_WORKSPACE": str(tmp_path), **AGENT_VARIABLES}
    async with anyio.create_task_group() as tasks:
        terminals = LocalTerminals(tasks, environment=given)
        terminal = await terminals.create_terminal(SESSION, "/bin/sh", ["-c", "env -0"], cwd=str(tmp_path))
        with anyio.fail_after(10):
            await terminals.wait_for_terminal_exit(SESSION, terminal)
        output = (await terminals.terminal_output(SESSION, terminal)).output
        await terminals.release_terminal(SESSION, terminal)
    seen = dict(entry.split("=", 1) for entry in output.split("\0") if "=" in entry)
    assert seen["EVAL_WORKSPACE"] == str(tmp_path)
    assert sorted(set(AGENT_VARIABLES) & set(seen)) == []
