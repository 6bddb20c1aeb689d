"""Running commands locally: real /bin/sh processes, their process groups, stdin, timeouts and cancellation."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import anyio
import pytest

from coder_agent.agent.shell import LocalRun, kill_group, live_members, run_local

from .shell_fixtures import alive, alive_in_group, fifo, read_fifo

pytestmark = pytest.mark.anyio
__all__ = ["fifo"]  # a fixture


async def run(
    command: str, cwd: Path, timeout: float = 30, limit: int = 10_000, env: dict[str, str] | None = None
) -> LocalRun:
    with anyio.fail_after(10):
        return await run_local(command, str(cwd), timeout, limit, env)


async def test_exit_code_and_both_streams_are_reported_in_order(tmp_path: Path) -> None:
    result = await run("echo out; echo err >&2; echo more; exit 3", tmp_path)
    assert (result.exit_code, result.signal, result.timed_out) == (3, None, False)
    assert result.output == "out\nerr\nmore\n"
    assert not result.truncated


async def test_a_command_killed_by_a_signal_reports_its_name(tmp_path: Path) -> None:
    result = await run("kill -KILL $$", tmp_path)
    assert (result.exit_code, result.signal) == (None, "SIGKILL")


async def test_it_runs_in_cwd_with_extra_environment(tmp_path: Path) -> None:
    command = 'pwd; echo "$GREETING"; command -v ls >/dev/null && echo path-ok'
    result = await run(command, tmp_path, env={"GREETING": "hi"})
    assert result.output.splitlines() == [str(tmp_path), "hi", "path-ok"]


@pytest.mark.parametrize(("command", "output"), [("read x; echo got:$x", "got:\n"), ("cat", ""), ("head -c 1", "")])
async def test_reading_stdin_gets_end_of_file_at_once(tmp_path: Path, command: str, output: str) -> None:
    result = await run(command, tmp_path)
    assert (result.exit_code, result.output, result.timed_out) == (0, output, False)


async def test_output_over_the_limit_keeps_the_end_and_counts_what_was_dropped(tmp_path: Path) -> None:
    result = await run("yes line | head -n 5000; echo END", tmp_path, limit=1000)
    assert result.exit_code == 0
    assert len(result.output) == 1000
    assert result.output.endswith("line\nEND\n")
    assert result.dropped_bytes == 5000 * 5 + 4 - 1000
    assert result.truncated


async def test_a_cut_through_a_multibyte_character_is_not_shown_as_garbage(tmp_path: Path) -> None:
    result = await run("printf 'ééééé'", tmp_path, limit=5)  # 10 bytes: the cut falls inside an é
    assert result.output == "éé"


async def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    result = await run("sleep 30 & echo $$ $!; sleep 30", tmp_path, timeout=0.5)
    assert result.timed_out
    assert result.exit_code is None and result.signal == "SIGTERM"
    pgid, background = map(int, result.output.split())
    assert alive_in_group(pgid) == []
    assert not alive(background)


async def test_background_jobs_neither_block_the_result_nor_outlive_the_command(tmp_path: Path) -> None:
    result = await run("sleep 30 & echo $$ $!", tmp_path)
    assert (result.exit_code, result.timed_out) == (0, False)
    pgid, background = map(int, result.output.split())
    assert alive_in_group(pgid) == []
    assert not alive(background)


async def test_cancellation_kills_the_whole_process_group_before_propagating(tmp_path: Path, fifo: Path) -> None:
    finished = False

    async def runner() -> None:
        nonlocal finished
        await run_local(f"sleep 30 & echo $$ $! > {fifo}; wait", str(tmp_path), 30, 1000)
        finished = True

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(runner)
            pgid, background = map(int, (await read_fifo(fifo)).split())
            assert alive_in_group(pgid)
            tasks.cancel_scope.cancel()
    assert not finished
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


async def test_a_missing_cwd_raises_oserror(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        await run("true", tmp_path / "missing")


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
