"""Running a shell command on this machine, for when the editor offers no terminal.

The command runs as `/bin/sh -c COMMAND`: the same shell the editor-terminal path uses, with no profile
scripts to slow it down or print into its output (a login `bash -lc` would read ~/.profile on every call).
It gets:

- stdin closed (`/dev/null`): our own stdin is the JSON-RPC pipe, and a command that reads input gets EOF
  at once instead of hanging;
- one pipe for stdout and stderr together, so the output reads in the order it was written;
- its own session and process group, so it has no controlling terminal and the whole group (background
  jobs included) can be killed at once;
- the agent's environment without the agent's credentials (`credentials.child_environment`).

Output is kept up to `output_limit` bytes: the *end* is kept, as an ACP terminal's `outputByteLimit` does,
because that is where errors and summaries are; `LocalRun.dropped_bytes` says how much of the start went.

The group is killed (SIGTERM, then SIGKILL after a short grace) on timeout, on cancellation, and when the
shell exits: background jobs do not outlive the command that started them. Nor do they outlive the agent:
while a group runs, the agent's `watchdog` would kill it should the agent die.
"""

from __future__ import annotations

import os
import signal
import subprocess
from dataclasses import dataclass

import anyio
from anyio.abc import ByteReceiveStream

from ..credentials import child_environment
from .watchdog import WATCHDOG

SHELL = "/bin/sh"
KILL_GRACE = 2.0  # seconds between SIGTERM and SIGKILL
DRAIN_GRACE = 1.0  # seconds to read what is left in the pipe once the group is gone
_POLL = 0.02


@dataclass(frozen=True)
class LocalRun:
    output: str
    exit_code: int | None  # None when killed by a signal
    signal: str | None  # e.g. "SIGTERM"
    timed_out: bool
    dropped_bytes: int = 0  # bytes dropped from the start of the output

    @property
    def truncated(self) -> bool:
        return self.dropped_bytes > 0


class _Tail:
    """The last `limit` bytes written, and how many came before them."""

    def __init__(self, limit: int) -> None:
        self.limit = max(limit, 0)
        self.data = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.data += chunk
        if len(self.data) > self.limit:
            del self.data[: len(self.data) - self.limit]

    @property
    def dropped(self) -> int:
        return self.total - len(self.data)

    def text(self) -> str:
        data = bytes(self.data)
        if self.dropped:  # the cut may have split a UTF-8 character: skip its continuation bytes
            skip = 0
            while skip < min(3, len(data)) and 0x80 <= data[skip] < 0xC0:
                skip += 1
            data = data[skip:]
        return data.decode("utf-8", errors="replace")


def live_members(pgid: int) -> list[int]:
    """The processes of group `pgid` that have not exited (zombies count as gone)."""
    try:
        entries = os.listdir("/proc")
    except FileNotFoundError:  # no procfs (macOS): ask the kernel whether the group exists at all
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return []
        except PermissionError:
            pass
        return [pgid]
    members: list[int] = []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so split after the last ')'.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            members.append(int(entry))
    return members


def _signal_group(pgid: int, sig: signal.Signals) -> bool:
    """Send `sig` to the group; False when the group no longer exists."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:  # only zombies left on some systems
        return bool(live_members(pgid))
    return True


async def _alive(pgid: int) -> bool:
    # Scanning /proc takes milliseconds on a busy machine: never on the event loop, which serves every session.
    return bool(await anyio.to_thread.run_sync(live_members, pgid))


async def _gone(pgid: int, within: float) -> bool:
    poll = 0.002  # most groups die at once on SIGTERM: look again soon, then less often
    with anyio.move_on_after(within):
        # Nothing signals the death of processes that are not our children (orphans): poll.
        while await _alive(pgid):
            await anyio.sleep(poll)
            poll = min(poll * 2, _POLL)
        return True
    return False


async def kill_group(pgid: int, grace: float = KILL_GRACE) -> None:
    """SIGTERM the whole process group, then SIGKILL whatever is still alive after `grace` seconds.

    Returns once no member is alive (or, if one ignores even SIGKILL, after a further bounded wait).
    Call it in a shielded scope when cleaning up after a cancellation.
    """
    if not _signal_group(pgid, signal.SIGTERM) or not await _alive(pgid):
        return
    if await _gone(pgid, grace):
        return
    _signal_group(pgid, signal.SIGKILL)
    await _gone(pgid, 1.0)


async def _pump(stream: ByteReceiveStream, tail: _Tail, done: anyio.Event) -> None:
    try:
        async for chunk in stream:
            tail.add(chunk)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass
    finally:
        done.set()


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _environment(extra: dict[str, str] | None) -> dict[str, str]:
    # The agent's own keys stay with the agent: `printenv` would put them on screen, in the session and in
    # the next model request (see `credentials`).
    return {**child_environment(), **(extra or {})}


async def run_local(
    command: str, cwd: str, timeout: float, output_limit: int, env: dict[str, str] | None = None
) -> LocalRun:
    """Run `command` through `/bin/sh -c` in `cwd` and return its output and how it ended.

    The command gets the agent's environment without the agent's credentials (`credentials`); `env` adds to
    (and overrides) that. Raises OSError when the shell cannot be
    started (a missing `cwd`, say). A timeout is a normal result (`timed_out`); cancellation kills the
    group before it propagates.
    """
    # Shielded: a cancel while the process is being set up would leave it, and its group, running unseen.
    with anyio.CancelScope(shield=True):
        WATCHDOG.start()
        process = await anyio.open_process(
            [SHELL, "-c", command],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=_environment(env),
            start_new_session=True,
        )
        pgid = process.pid  # a session leader's group id is its pid
        WATCHDOG.watch(pgid)  # killed even if the agent is (see `watchdog`)
    assert process.stdout is not None
    tail = _Tail(output_limit)
    pumped = anyio.Event()
    finished = False
    try:
        with anyio.move_on_after(timeout) as deadline:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(_pump, process.stdout, tail, pumped)
                await process.wait()
                finished = True
                await kill_group(pgid)  # leftover background jobs would hold the pipe open
                with anyio.move_on_after(DRAIN_GRACE):  # one that left the group (setsid) may still hold it
                    await pumped.wait()
                tasks.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True), anyio.move_on_after(KILL_GRACE + 3):
            # The leader is in the group for good (a session leader cannot leave it). No `process.kill()`
            # here: Popen polls before signalling, reaping the exit status from under asyncio's watcher.
            await kill_group(pgid)
            WATCHDOG.forget(pgid)
            await process.aclose()
    code = process.returncode
    return LocalRun(
        output=tail.text(),
        exit_code=code if code is not None and code >= 0 else None,
        signal=signal_name(-code) if code is not None and code < 0 else None,
        timed_out=deadline.cancelled_caught and not finished,
        dropped_bytes=tail.dropped,
    )
