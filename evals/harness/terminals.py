"""`terminal/*` as the editor profile serves them: local processes, each in its own process group.

Output (stdout and stderr together) is kept up to the agent's `outputByteLimit`, cut from the start at a
character boundary, as ACP says. `kill` ends the whole group and the terminal stays readable; `release`
kills if needed and forgets the id. A terminal still held when a turn ends is reported (the agent MUST
release every terminal); any left are killed when the trial ends.
"""

from __future__ import annotations

import contextlib
import itertools
import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

from coder_agent.acp.errors import RESOURCE_NOT_FOUND, RequestError
from coder_agent.acp.schema import CreateTerminalRequest, TerminalRequest

from .fs import confine
from .procs import kill_group

DEFAULT_OUTPUT_LIMIT = 1_000_000
EXIT_DRAIN = 0.5  # seconds to read what is left once the shell has exited, before its group is killed


@dataclass
class _Terminal:
    process: anyio.abc.Process
    limit: int
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    exit_status: dict[str, Any] | None = None
    exited: anyio.Event = field(default_factory=anyio.Event)

    def add(self, chunk: bytes) -> None:
        self.output.extend(chunk)
        if len(self.output) > self.limit:
            del self.output[: len(self.output) - self.limit]
            while self.output and self.output[0] & 0xC0 == 0x80:  # not in the middle of a character
                del self.output[0]
            self.truncated = True


def _status(returncode: int | None) -> dict[str, Any]:
    if returncode is not None and returncode < 0:
        return {"exitCode": None, "signal": signal.Signals(-returncode).name}
    return {"exitCode": returncode, "signal": None}


class TerminalService:
    def __init__(self, root: Path, env: Mapping[str, str], tasks: anyio.abc.TaskGroup) -> None:
        self._root = root
        self._env = dict(env)
        self._tasks = tasks
        self._ids = itertools.count(1)
        self._live: dict[str, _Terminal] = {}
        self.created = 0

    def _get(self, params: Any) -> _Terminal:
        request = TerminalRequest.model_validate(params)
        terminal = self._live.get(request.terminal_id)
        if terminal is None:
            raise RequestError(RESOURCE_NOT_FOUND, f"unknown terminal {request.terminal_id}")
        return terminal

    async def create(self, params: Any) -> dict[str, Any]:
        request = CreateTerminalRequest.model_validate(params)
        cwd = confine(self._root, request.cwd) if request.cwd else self._root
        env = {**self._env, **{variable.name: variable.value for variable in request.env}}
        try:
            process = await anyio.open_process(
                [request.command, *request.args],
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            raise RequestError.internal_error(f"could not start {request.command}: {exc}") from exc
        terminal = _Terminal(process, request.output_byte_limit or DEFAULT_OUTPUT_LIMIT)
        terminal_id = f"term_{next(self._ids)}"
        self._live[terminal_id] = terminal
        self.created += 1
        self._tasks.start_soon(self._watch, terminal)
        return {"terminalId": terminal_id}

    async def _watch(self, terminal: _Terminal) -> None:
        process = terminal.process
        drained = anyio.Event()

        async def read() -> None:
            assert process.stdout is not None
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                async for chunk in process.stdout:
                    terminal.add(chunk)
            drained.set()

        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(read)
                await process.wait()
                with anyio.move_on_after(EXIT_DRAIN):
                    await drained.wait()
                kill_group(process)  # background jobs do not outlive the command
                tg.cancel_scope.cancel()
        finally:
            terminal.exit_status = _status(process.returncode)
            terminal.exited.set()
            with anyio.CancelScope(shield=True):
                kill_group(process)
                await process.aclose()

    async def output(self, params: Any) -> dict[str, Any]:
        terminal = self._get(params)
        result: dict[str, Any] = {
            "output": terminal.output.decode("utf-8", errors="replace"),
            "truncated": terminal.truncated,
        }
        if terminal.exit_status is not None:
            result["exitStatus"] = terminal.exit_status
        return result

    async def wait_for_exit(self, params: Any) -> dict[str, Any]:
        terminal = self._get(params)
        await terminal.exited.wait()  # the agent bounds this wait itself
        assert terminal.exit_status is not None
        return terminal.exit_status

    async def kill(self, params: Any) -> dict[str, Any]:
        kill_group(self._get(params).process)
        return {}

    async def release(self, params: Any) -> dict[str, Any]:
        terminal = self._get(params)
        kill_group(terminal.process)
        del self._live[TerminalRequest.model_validate(params).terminal_id]
        return {}

    def live_ids(self) -> list[str]:
        """Terminals created and not released yet."""
        return list(self._live)

    async def close(self) -> None:
        """Kill every terminal still held (the trial is over)."""
        for terminal in self._live.values():
            kill_group(terminal.process)
        with anyio.move_on_after(5):
            for terminal in self._live.values():
                await terminal.exited.wait()
        self._live.clear()
