"""The stdio transport on whatever the editor (or a shell) connects: pipes, files, /dev/null, a terminal."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from coder_agent.acp.stdio import stdio_streams
from tests.support.acp_client import agent_command, base_env

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def devnull() -> Iterator[tuple[int, int]]:
    read, write = os.open(os.devnull, os.O_RDONLY), os.open(os.devnull, os.O_WRONLY)
    yield read, write
    os.close(read)
    os.close(write)


@pytest.mark.anyio
async def test_dev_null_reads_as_an_immediate_end_and_takes_writes(devnull: tuple[int, int]) -> None:
    read, write = devnull
    with anyio.fail_after(5):
        async with stdio_streams(read, write) as (receive, send):
            await send.send(b'{"jsonrpc":"2.0"}\n')
            with pytest.raises(anyio.EndOfStream):
                await receive.receive()


def agent_env(tmp_path: Path) -> dict[str, str]:
    return {**base_env(), "PYTHONPATH": str(REPO_ROOT), "CODER_AGENT_HOME": str(tmp_path / "home")}


@pytest.mark.e2e
def test_acp_with_stdin_from_dev_null_exits_at_once(tmp_path: Path) -> None:
    started = time.monotonic()
    with open(os.devnull, "rb") as stdin:
        done = subprocess.run(
            agent_command(), stdin=stdin, capture_output=True, env=agent_env(tmp_path), timeout=30, check=False
        )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == b""
    assert time.monotonic() - started < 20


@pytest.mark.e2e
@pytest.mark.skipif(sys.platform != "linux", reason="pty semantics checked on Linux")
def test_one_ctrl_d_in_a_terminal_ends_the_agent(tmp_path: Path) -> None:
    """Ctrl-D on a terminal ends input once; the agent must not wait for a second one."""
    master, slave = os.openpty()
    try:
        process = subprocess.Popen(
            agent_command(),
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=agent_env(tmp_path),
            start_new_session=True,
        )
        os.close(slave)
        os.write(master, b"\x04")  # Ctrl-D on an empty line: the agent's read returns end of input
        try:
            code = process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            pytest.fail("the agent still waits for input after one Ctrl-D")
        assert code == 0
        assert process.stdout is not None and process.stdout.read() == b""
    finally:
        os.close(master)
