"""Looking at processes independently of the code under test (from /proc), and a named pipe to wait on."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import anyio
import pytest


def alive(pid: int) -> bool:
    """Whether `pid` is a process that has not exited (a zombie has)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat[stat.rfind(")") + 2] not in "ZX"


def alive_in_group(pgid: int) -> list[int]:
    """The live processes of process group `pgid`, read from /proc independently of the code under test."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (FileNotFoundError, ProcessLookupError, IndexError):
                continue
            if int(fields[2]) == pgid and fields[0] not in "ZX":
                found.append(int(entry.name))
    return found


async def wait_gone(pids: list[int], timeout: float = 10.0) -> list[int]:
    """Wait, without polling (pidfds), until every process in `pids` has exited; those still alive after `timeout`."""
    fds: list[int] = []
    try:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):  # gone already
                fds.append(os.pidfd_open(pid))
        with anyio.move_on_after(timeout):
            for fd in fds:
                await anyio.wait_readable(fd)
    finally:
        for fd in fds:
            os.close(fd)
    return [pid for pid in pids if alive(pid)]


async def read_fifo(path: Path, timeout: float = 5.0) -> str:
    """What a command writes into the named pipe at `path` (which it opens once it is ready)."""
    try:
        with anyio.fail_after(timeout):
            return await anyio.to_thread.run_sync(path.read_text, abandon_on_cancel=True)
    finally:  # a reader still blocked in open(): give it a writer so its thread ends
        with contextlib.suppress(OSError):
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "ready.fifo"
    os.mkfifo(path)
    return path
