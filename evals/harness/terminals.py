"""`terminal/*` as the editor profile serves them: the agent's own local terminals, confined to the workspace.

Each command runs as `coder_agent.local.terminals` runs it: its own process group, stdin closed, output (stdout
and stderr together) kept up to the agent's `outputByteLimit` from the end, the group killed when the command
exits, is killed or is released. Commands start from the trial's environment, without the agent's
credentials. A terminal still held when a turn ends is reported (the agent MUST release every terminal); any
left are killed when the trial ends.

With a `CommandWrapper` (the docker sandbox's), each command is started through it (a `docker exec` in the
trial's container): the local process is then only the exec's client, so a kill or release also kills the
command's group in the container, by the id the wrapper had it write down.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

import anyio
import anyio.abc

from coder_agent.acp.errors import RESOURCE_NOT_FOUND, RequestError
from coder_agent.acp.schema import CreateTerminalRequest, TerminalExitStatus, TerminalRequest
from coder_agent.agent.errors import ClientError
from coder_agent.local.terminals import LocalTerminals

from .fs import confine

T = TypeVar("T")


class CommandWrapper(Protocol):
    def wrap(
        self, command: str, args: Sequence[str], cwd: str, env: Mapping[str, str]
    ) -> tuple[str, list[str], dict[str, str], str]:
        """(command, args, env) to start here instead, and the handle `kill` takes."""

    async def kill(self, handle: str) -> None: ...


def _status(status: TerminalExitStatus) -> dict[str, Any]:
    return {"exitCode": status.exit_code, "signal": status.signal}


class TerminalService:
    def __init__(
        self, root: Path, env: Mapping[str, str], tasks: anyio.abc.TaskGroup, wrapper: CommandWrapper | None = None
    ) -> None:
        self._root = root
        self._terminals = LocalTerminals(tasks, environment=env)
        self._wrapper = wrapper
        self._ids = itertools.count(1)
        self._live: dict[str, str] = {}  # our terminal id -> the local terminal's
        self._handles: dict[str, str] = {}  # the local terminal's id -> the wrapper's handle of its command
        self.created = 0

    def _request(self, params: Any) -> tuple[str, str]:
        """(our id, the local terminal's id) of a terminal request."""
        request = TerminalRequest.model_validate(params)
        local = self._live.get(request.terminal_id)
        if local is None:
            raise RequestError(RESOURCE_NOT_FOUND, f"unknown terminal {request.terminal_id}")
        return request.terminal_id, local

    async def create(self, params: Any) -> dict[str, Any]:
        request = CreateTerminalRequest.model_validate(params)
        cwd = confine(self._root, request.cwd) if request.cwd else self._root
        env = {variable.name: variable.value for variable in request.env}
        command, args, handle = request.command, list(request.args), None
        if self._wrapper is not None:
            command, args, env, handle = self._wrapper.wrap(command, args, str(cwd), env)
        try:
            local = await self._terminals.create_terminal(
                request.session_id, command, args, str(cwd), env, request.output_byte_limit
            )
        except OSError as exc:
            raise RequestError.internal_error(f"could not start {request.command}: {exc}") from exc
        if handle is not None:
            self._handles[local] = handle
        terminal_id = f"term_{next(self._ids)}"
        self._live[terminal_id] = local
        self.created += 1
        return {"terminalId": terminal_id}

    async def output(self, params: Any) -> dict[str, Any]:
        _, local = self._request(params)
        result = await _known(self._terminals.terminal_output("", local))
        answer: dict[str, Any] = {"output": result.output, "truncated": result.truncated}
        if result.exit_status is not None:
            answer["exitStatus"] = _status(result.exit_status)
        return answer

    async def wait_for_exit(self, params: Any) -> dict[str, Any]:
        _, local = self._request(params)
        return _status(await _known(self._terminals.wait_for_terminal_exit("", local)))  # the agent bounds it

    async def kill(self, params: Any) -> dict[str, Any]:
        _, local = self._request(params)
        await self._kill_wrapped(local)
        await _known(self._terminals.kill_terminal("", local))
        return {}

    async def release(self, params: Any) -> dict[str, Any]:
        terminal_id, local = self._request(params)
        del self._live[terminal_id]
        await self._kill_wrapped(local)
        await _known(self._terminals.release_terminal("", local))
        return {}

    async def _kill_wrapped(self, local: str) -> None:
        handle = self._handles.pop(local, None)
        if handle is not None and self._wrapper is not None:
            with anyio.CancelScope(shield=True):
                await self._wrapper.kill(handle)

    def live_ids(self) -> list[str]:
        """Terminals created and not released yet."""
        return list(self._live)

    async def close(self) -> None:
        """Kill every terminal still held (the trial is over)."""
        self._live.clear()
        with anyio.move_on_after(10):
            for local in list(self._handles):
                await self._kill_wrapped(local)
            await self._terminals.release_all()


async def _known(call: Awaitable[T]) -> T:
    try:
        return await call
    except ClientError as exc:  # released under us: as unknown as any other id
        raise RequestError(RESOURCE_NOT_FOUND, exc.message) from exc
