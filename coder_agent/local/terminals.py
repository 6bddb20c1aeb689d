"""ACP's `terminal/*` served on this machine: each command runs as a process group of its own.

`create_terminal` starts `command args` (the agent's `run_command` gives `/bin/sh -c COMMAND`) with:

- stdin closed (`/dev/null`): the agent's own stdin is the JSON-RPC pipe, and a command that reads input
  gets EOF at once instead of hanging;
- one pipe for stdout and stderr together, so the output reads in the order it was written;
- its own session and process group, so it has no controlling terminal and the whole group (background
  jobs included) can be killed at once;
- the environment without the agent's credentials (`credentials.child_environment`), plus `env`.

Output is kept up to `output_byte_limit` bytes: the *end* is kept, as ACP says, cut at a character
boundary; `_meta` says how many bytes of the start went (`agent.client.dropped_bytes`). A task in the task
group the creator gives pumps each terminal's output; when the command exits, what it left running in its
group (background jobs, which would hold the pipe open) is killed, and the pipe is read to its end for at
most `DRAIN_GRACE` seconds. `kill_terminal` ends the whole group (SIGTERM, then SIGKILL after a grace) and
the terminal stays readable; `release_terminal` kills if needed and forgets the id. While a group runs, the
`watchdog` would kill it should the agent die.

A command that cannot start raises `OSError` (a missing `cwd`, say); an unknown terminal id `ClientError`.
"""

from __future__ import annotations

import itertools
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import anyio
import anyio.abc

from ..acp.schema import TerminalExitStatus, TerminalOutputResponse
from ..agent.client import dropped_bytes_meta
from ..agent.errors import ClientError
from ..kit.credentials import child_environment
from .process_groups import KILL_GRACE, kill_group, signal_name
from .watchdog import WATCHDOG

DEFAULT_OUTPUT_LIMIT = 1_000_000  # bytes kept of a terminal whose creator sets no limit
DRAIN_GRACE = 1.0  # seconds to read what is left in the pipe once the group is gone
EXIT_WAIT = KILL_GRACE + DRAIN_GRACE + 3.0  # the longest a kill waits for the exit to be recorded


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


def exit_status(returncode: int | None) -> TerminalExitStatus:
    if returncode is None:
        return TerminalExitStatus()
    if returncode < 0:
        return TerminalExitStatus(signal=signal_name(-returncode))
    return TerminalExitStatus(exit_code=returncode)


@dataclass
class _Terminal:
    process: anyio.abc.Process
    tail: _Tail
    exited: anyio.Event = field(default_factory=anyio.Event)  # set once the output is complete too
    status: TerminalExitStatus | None = None


async def _pump(stream: anyio.abc.ByteReceiveStream, tail: _Tail, done: anyio.Event) -> None:
    try:
        async for chunk in stream:
            tail.add(chunk)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass
    finally:
        done.set()


class LocalTerminals:
    """Terminals on this machine. `environment`: what commands start from (default: the agent's own, read at
    each start); the agent's credentials are taken out of it either way."""

    def __init__(self, tasks: anyio.abc.TaskGroup, environment: Mapping[str, str] | None = None) -> None:
        self._tasks = tasks
        self._environment = environment
        self._live: dict[str, _Terminal] = {}
        self._ids = itertools.count(1)

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: Sequence[str] = (),
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        output_byte_limit: int | None = None,
    ) -> str:
        # The agent's own keys stay with the agent: `printenv` would put them on screen, in the session and in
        # the next model request (see `credentials`).
        environment = {**child_environment(self._environment), **(env or {})}
        limit = DEFAULT_OUTPUT_LIMIT if output_byte_limit is None else output_byte_limit
        # Shielded: a cancel while the process is being set up would leave it, and its group, running unseen.
        with anyio.CancelScope(shield=True):
            WATCHDOG.start()
            process = await anyio.open_process(
                [command, *args],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=cwd,
                env=environment,
                start_new_session=True,
            )
            WATCHDOG.watch(process.pid)  # a session leader's group id is its pid; killed even if the agent is
            terminal = _Terminal(process, _Tail(limit))
            try:
                self._tasks.start_soon(self._run, terminal)
            except RuntimeError as exc:  # the task group is closed: nothing could read the output
                await self._close(terminal)
                raise OSError(f"no task left to run {command}: {exc}") from exc
        terminal_id = f"local-terminal-{next(self._ids)}"
        self._live[terminal_id] = terminal
        return terminal_id

    async def _run(self, terminal: _Terminal) -> None:
        process = terminal.process
        assert process.stdout is not None
        pumped = anyio.Event()
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(_pump, process.stdout, terminal.tail, pumped)
                await process.wait()
                await kill_group(process.pid)  # leftover background jobs would hold the pipe open
                with anyio.move_on_after(DRAIN_GRACE):  # one that left the group (setsid) may still hold it
                    await pumped.wait()
                tasks.cancel_scope.cancel()
        finally:
            await self._close(terminal)

    @staticmethod
    async def _close(terminal: _Terminal) -> None:
        process = terminal.process
        with anyio.CancelScope(shield=True), anyio.move_on_after(KILL_GRACE + 3):
            # The leader is in the group for good (a session leader cannot leave it). No `process.kill()`
            # here: Popen polls before signalling, reaping the exit status from under asyncio's watcher.
            await kill_group(process.pid)
            WATCHDOG.forget(process.pid)
            await process.aclose()
        terminal.status = exit_status(process.returncode)
        terminal.exited.set()

    def _get(self, terminal_id: str) -> _Terminal:
        terminal = self._live.get(terminal_id)
        if terminal is None:
            raise ClientError(f"unknown terminal {terminal_id}")
        return terminal

    async def terminal_output(self, session_id: str, terminal_id: str) -> TerminalOutputResponse:
        terminal = self._get(terminal_id)
        tail = terminal.tail
        return TerminalOutputResponse(
            output=tail.text(),
            truncated=tail.dropped > 0,
            exit_status=terminal.status,
            _meta=dropped_bytes_meta(tail.dropped),
        )

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str) -> TerminalExitStatus:
        terminal = self._get(terminal_id)
        await terminal.exited.wait()
        assert terminal.status is not None
        return terminal.status

    async def kill_terminal(self, session_id: str, terminal_id: str) -> None:
        await self._kill(self._get(terminal_id))

    async def release_terminal(self, session_id: str, terminal_id: str) -> None:
        terminal = self._get(terminal_id)
        try:
            with anyio.CancelScope(shield=True):
                await self._kill(terminal)
        finally:
            self._live.pop(terminal_id, None)

    @staticmethod
    async def _kill(terminal: _Terminal) -> None:
        if terminal.exited.is_set():
            return
        await kill_group(terminal.process.pid)
        with anyio.move_on_after(EXIT_WAIT):  # what is left in the pipe is read, and the exit recorded
            await terminal.exited.wait()

    def output_now(self, terminal_id: str) -> str | None:
        """What the terminal printed so far (the tail kept), without waiting; None for an unknown terminal."""
        terminal = self._live.get(terminal_id)
        return terminal.tail.text() if terminal is not None else None

    def live_ids(self) -> list[str]:
        """The terminals created and not released yet."""
        return list(self._live)

    async def release_all(self) -> None:
        """Kill and forget every terminal still held."""
        for terminal_id in self.live_ids():
            await self.release_terminal("", terminal_id)
