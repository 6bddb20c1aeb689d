"""Running a command in a local terminal the way `run_command` does, for the tests of what it leaves behind."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import anyio

from coder_agent.acp.schema import TerminalExitStatus
from coder_agent.agent.client import dropped_bytes
from coder_agent.local.terminals import LocalTerminals

SESSION = "sess-local"


@dataclass(frozen=True)
class Ran:
    output: str
    status: TerminalExitStatus
    killed: bool  # killed by us on timeout
    truncated: bool
    dropped: int | None


async def run(
    command: str, cwd: Path, timeout: float = 30, limit: int = 10_000, env: dict[str, str] | None = None
) -> Ran:
    """`/bin/sh -c command` in a terminal, as `run_command` runs it: wait, kill on timeout, read, release."""
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            terminals = LocalTerminals(tasks)
            terminal = await terminals.create_terminal(
                SESSION, "/bin/sh", ["-c", command], cwd=str(cwd), env=env, output_byte_limit=limit
            )
            with anyio.move_on_after(timeout) as deadline:
                await terminals.wait_for_terminal_exit(SESSION, terminal)
            if deadline.cancelled_caught:
                await terminals.kill_terminal(SESSION, terminal)
            result = await terminals.terminal_output(SESSION, terminal)
            await terminals.release_terminal(SESSION, terminal)
            assert terminals.live_ids() == []
    assert result.exit_status is not None
    return Ran(result.output, result.exit_status, deadline.cancelled_caught, result.truncated, dropped_bytes(result))
