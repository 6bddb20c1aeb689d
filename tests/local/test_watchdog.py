"""The watchdog kills the process groups still registered when the agent's end of its pipe closes.

`Watchdog.close()` closes that end as the agent's death would; each test uses its own watchdog.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from coder_agent.local.watchdog import WATCHDOG, Watchdog

from ..support.commands import run
from ..support.processes import alive_in_group, wait_gone

pytestmark = pytest.mark.anyio


@pytest.fixture
def groups() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Process groups a test starts (`sleep`s, each leading its own group); killed at the end whatever happens."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(5)


def start_group(groups: list[subprocess.Popen[bytes]], script: str = "sleep 300 & sleep 300") -> int:
    process = subprocess.Popen(["/bin/sh", "-c", script], start_new_session=True)
    groups.append(process)
    return process.pid


async def test_closing_the_pipe_kills_the_registered_groups_spares_the_forgotten_and_ends_the_watchdog(
    groups: list[subprocess.Popen[bytes]],
) -> None:
    watchdog = Watchdog()
    kept, forgotten = start_group(groups), start_group(groups)
    watchdog.watch(kept)
    watchdog.watch(forgotten)
    watchdog.forget(forgotten)
    assert watchdog.pid is not None
    watchdog.close()
    assert await wait_gone([watchdog.pid]) == []
    assert alive_in_group(kept) == []
    assert len(alive_in_group(forgotten)) == 3


async def test_a_group_that_ignores_sigterm_is_killed_after_the_grace(groups: list[subprocess.Popen[bytes]]) -> None:
    watchdog = Watchdog()
    stubborn = start_group(groups, "trap '' TERM; sleep 300 & sleep 300")
    watchdog.watch(stubborn)
    members = alive_in_group(stubborn)
    watchdog.close()
    assert await wait_gone(members) == []


async def test_a_killed_watchdog_is_replaced_and_the_new_one_knows_every_group(
    groups: list[subprocess.Popen[bytes]],
) -> None:
    watchdog = Watchdog()
    first = start_group(groups)
    watchdog.watch(first)
    old = watchdog.pid
    assert old is not None
    os.kill(old, signal.SIGKILL)
    assert await wait_gone([old]) == []
    second = start_group(groups)
    watchdog.watch(second)  # finds the pipe broken: starts another and hands it both groups
    assert watchdog.pid not in (None, old)
    members = alive_in_group(first) + alive_in_group(second)
    assert len(members) == 6
    watchdog.close()
    assert await wait_gone(members) == []


async def test_commands_never_inherit_the_watchdogs_pipe(tmp_path: Path) -> None:
    result = await run("ls -l /proc/$$/fd", tmp_path, limit=100_000)
    assert WATCHDOG._pipe is not None
    pipe = os.readlink(f"/proc/self/fd/{WATCHDOG._pipe}")  # pipe:[inode]
    assert pipe.startswith("pipe:") and pipe not in result.output
