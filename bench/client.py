"""The benchmarks' client: `coder-agent acp` started and stopped by the eval harness's launcher (the one the evals
and the tests use too, evals/harness/agent_process.py), spoken to with the agent's own JSON-RPC `Connection`.

The schema checker is left out of the wire (`WireLog(check=False)`): a benchmark times the agent, not the
checker; the tests and the evals check every line.
"""

from __future__ import annotations

import sys
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coder_agent.acp.errors import RequestError
from evals.harness.agent_process import AgentProcess, launch_agent
from evals.harness.config import python_env
from evals.harness.wire import WireLog

Notification = tuple[str, Any]


class Editor:
    """A client that offers nothing: the agent's requests get method-not-found, its notifications are counted."""

    def __init__(self) -> None:
        self.notifications = 0
        self.on_notification: Callable[[str, Any], None] | None = None

    async def handle_request(self, method: str, params: Any) -> Any:
        raise RequestError.method_not_found(method)

    async def handle_notification(self, method: str, params: Any) -> None:
        self.notifications += 1
        if self.on_notification is not None:
            self.on_notification(method, params)


@asynccontextmanager
async def agent(
    env: Mapping[str, str],
    cwd: Path,
    dispatcher: Any = None,
    stderr: Path | None = None,
    on_agent_lines: Callable[[list[dict[str, Any] | None]], None] | None = None,
) -> AsyncIterator[AgentProcess]:
    """`coder-agent acp` of this checkout, in `cwd` with `env`; its stderr to `stderr` (else a file in `cwd`)."""
    wire = WireLog(on_agent_lines=on_agent_lines, check=on_agent_lines is not None)
    stderr_path = stderr or cwd / "agent.stderr.log"
    launch = launch_agent(dispatcher or Editor(), wire, env=python_env(env), cwd=cwd, stderr_path=stderr_path)
    async with launch as running:
        yield running


async def timed_request(running: AgentProcess, method: str, params: Any) -> tuple[float, Any]:
    """Seconds from writing the request to reading its answer, and the answer."""
    start = time.perf_counter()
    result = await running.connection.request(method, params)
    return time.perf_counter() - start, result
