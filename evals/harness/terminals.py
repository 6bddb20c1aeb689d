"""`terminal/*` as the editor profile serves them: the agent's own local terminals, confined to the workspace.

Each command runs as `coder_agent.local.terminals` runs it: its own process group, stdin closed, output (stdout
and stderr together) kept up to the agent's `outputByteLimit` from the end, the group killed when the command
exits, is killed or is released. Commands start from the trial's environment, without the agent's
credentials. A terminal still held when a turn ends is reported (the agent MUST release every terminal); any
left are killed when the trial ends.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.abc

from coder_agent.acp.errors import RESOURCE_NOT_FOUND, RequestError
from coder_agent.acp.schema import CreateTerminalRequest, TerminalExitStatus, TerminalRequest
from coder_agent.agent.errors import ClientError
from coder_agent.local.terminals import LocalTerminals

from .fs import confine

T = TypeVar("T")


def _status(status: TerminalExitStatus) -> dict[str, Any]:
    return {"exitCode": status.exit_code, "signal": status.signal}


class TerminalService:
    def __init__(self, root: Path, env: Mapping[str, str], tasks: anyio.abc.TaskGroup) -> None:
        self._root = root
        self._terminals = LocalTerminals(tasks, environment=env)
        self._ids = itertools.count(1)
        self._live: dict[str, str] = {}  # our terminal id -> the local terminal's
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
        try:
            local = await self._terminals.create_terminal(
                request.session_id, request.command, request.args, str(cwd), env, request.output_byte_limit
            )
        except OSError as exc:
            raise RequestError.internal_error(f"could not start {request.command}: {exc}") from exc
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
        await _known(self._terminals.kill_terminal("", local))
        return {}

    async def release(self, params: Any) -> dict[str, Any]:
        terminal_id, local = self._request(params)
        del self._live[terminal_id]
        await _known(self._terminals.release_terminal("", local))
        return {}

    def live_ids(self) -> list[str]:
        """Terminals created and not released yet."""
        return list(self._live)

    async def close(self) -> None:
        """Kill every terminal still held (the trial is over)."""
        self._live.clear()
        with anyio.move_on_after(10):
            await self._terminals.release_all()


async def _known(call: Awaitable[T]) -> T:
    try:
        return await call
    except ClientError as exc:  # released under us: as unknown as any other id
        raise RequestError(RESOURCE_NOT_FOUND, exc.message) from exc
