"""Process groups: which of their members still run, and killing a whole group (SIGTERM, then SIGKILL).

A command started in its own session leads a process group whose id is its pid; its background jobs join
that group unless they start a session of their own. Killing the group kills them all at once.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Collection, Iterator

import anyio

KILL_GRACE = 2.0  # seconds between SIGTERM and SIGKILL
_POLL = 0.02


def _processes() -> Iterator[tuple[int, list[bytes]]] | None:
    """Each live process's pid and the fields of its `/proc/PID/stat` after the name ("state ppid pgrp ...");
    None where there is no procfs. Zombies count as gone."""
    try:
        entries = os.listdir("/proc")
    except FileNotFoundError:
        return None

    def read() -> Iterator[tuple[int, list[bytes]]]:
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
            if len(fields) > 2 and fields[0] not in (b"Z", b"X"):
                yield int(entry), fields

    return read()


def live_members(pgid: int) -> list[int]:
    """The processes of group `pgid` that have not exited (zombies count as gone)."""
    processes = _processes()
    if processes is None:  # no procfs (macOS): ask the kernel whether the group exists at all
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return []
        except PermissionError:
            pass
        return [pgid]
    return [pid for pid, fields in processes if int(fields[2]) == pgid]


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


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def children() -> list[int]:
    """This process's children that have not exited, from /proc (none where there is no procfs)."""
    me = str(os.getpid()).encode()
    return [pid for pid, fields in _processes() or () if fields[1] == me]


def end_children(grace: float, spare: Collection[int] = ()) -> None:
    """SIGTERM every child's process group (MCP servers and commands lead their own), or the child alone when
    it is in ours; SIGKILL whatever still runs after `grace` seconds. Synchronous: for an agent that must exit
    now (`exit_deadline`), with no event loop to wait on; `spare` are children that end by themselves."""
    ours = os.getpgid(0)
    groups: list[int] = []
    for pid in children():
        if pid in spare:
            continue
        try:
            pgid = os.getpgid(pid)
        except ProcessLookupError:
            continue
        if pgid != ours:
            if _signal_group(pgid, signal.SIGTERM):
                groups.append(pgid)
        else:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    left = groups
    while left and time.monotonic() < deadline:
        time.sleep(0.005)  # nothing signals the death of a group's members that are not our children
        left = [pgid for pgid in left if live_members(pgid)]
    for pgid in left:
        _signal_group(pgid, signal.SIGKILL)
