"""Subprocesses the harness runs (verifiers, oracle solutions, git), each in its own process group.

A process group can be killed whole: a verifier's pytest, or a shell's background jobs, never outlive it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.abc

OUTPUT_LIMIT = 200_000  # bytes of output kept (the end)
DRAIN_GRACE = 1.0


@dataclass(frozen=True)
class ProcResult:
    exit_code: int | None  # None: killed (by us, on timeout, or by a signal)
    timed_out: bool
    output: str
    seconds: float

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


def kill_group(process: anyio.abc.Process) -> None:
    """SIGKILL the process's group (it was started in a new session, so the group id is its pid)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def tool_path(env: Mapping[str, str]) -> str:
    """PATH with this interpreter's folder first, so `python` in a task means the harness's Python."""
    return os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", os.defpath)])


async def run(
    command: Sequence[str] | str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    log_path: Path | None = None,
) -> ProcResult:
    """Run `command` (a string goes to /bin/sh -c) with stdout and stderr merged; kill its group on timeout."""
    argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
    started = time.monotonic()
    chunks = bytearray()
    process = await anyio.open_process(
        argv,
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    timed_out = False
    try:
        async with anyio.create_task_group() as tg:

            async def read() -> None:
                assert process.stdout is not None
                with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    async for chunk in process.stdout:
                        chunks.extend(chunk)
                        if len(chunks) > 2 * OUTPUT_LIMIT:
                            del chunks[: len(chunks) - OUTPUT_LIMIT]

            tg.start_soon(read)
            with anyio.move_on_after(timeout) as deadline:
                await process.wait()
            timed_out = deadline.cancelled_caught
            kill_group(process)  # whatever the command left running goes too
            tg.cancel_scope.deadline = anyio.current_time() + DRAIN_GRACE
    finally:
        with anyio.CancelScope(shield=True):
            kill_group(process)
            await process.aclose()
    output = bytes(chunks[-OUTPUT_LIMIT:]).decode("utf-8", errors="replace")
    if timed_out:
        output += f"\n[harness: killed after {timeout:g} s]\n"
    if log_path is not None:
        await anyio.Path(log_path).write_text(output, encoding="utf-8")
    code = None if timed_out or process.returncode is None or process.returncode < 0 else process.returncode
    return ProcResult(code, timed_out, output, time.monotonic() - started)
