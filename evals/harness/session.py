"""Driving one ACP session as an editor would: initialize, session/new (and mode), then prompt turns under
the trial's limits.

A turn that runs past its wall-clock budget, or whose reported cost passes the cap, is cancelled the ACP
way: a `session/cancel` notification, then the harness waits (bounded) for the prompt's answer, which must
be `stopReason: cancelled`.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

import anyio

from coder_agent.acp.errors import ConnectionClosed, RequestError
from coder_agent.acp.jsonrpc import Connection

from .client import EvalClient, client_capabilities
from .results import Attempt
from .task import Task

CANCEL_GRACE = 15.0  # seconds the agent gets to answer the prompt once cancelled
CLIENT_INFO = {"name": "coder-agent-evals", "title": "coder-agent eval harness", "version": "0.1.0"}


class SessionStartError(RuntimeError):
    """The agent did not get as far as a session (it failed to start, or answered with an error)."""


async def open_session(connection: Connection, client: EvalClient, task: Task, cwd: str) -> str:
    """initialize -> session/new -> (session/set_config_option mode); returns the session id."""
    try:
        with anyio.fail_after(task.config.timeouts.start_seconds):
            init = await connection.request(
                "initialize",
                {
                    "protocolVersion": 1,
                    "clientCapabilities": client_capabilities(client.profile),
                    "clientInfo": CLIENT_INFO,
                },
            )
            if not isinstance(init, dict) or init.get("protocolVersion") != 1:
                raise SessionStartError(f"initialize: the agent does not speak protocol 1: {init!r}")
            new = await connection.request("session/new", {"cwd": cwd, "mcpServers": []})
            session_id = new.get("sessionId") if isinstance(new, dict) else None
            if not isinstance(session_id, str):
                raise SessionStartError(f"session/new returned no sessionId: {new!r}")
            if task.config.mode is not None:
                params = {"sessionId": session_id, "configId": "mode", "value": task.config.mode}
                await connection.request("session/set_config_option", params)
    except TimeoutError as exc:
        raise SessionStartError(f"no session after {task.config.timeouts.start_seconds:g} s") from exc
    except RequestError as exc:
        raise SessionStartError(f"the agent answered {exc.code}: {exc.message}") from exc
    return session_id


class CostGuard:
    """Wakes the running turn when the session's cumulative cost passes `cap`."""

    def __init__(self, cap: float | None) -> None:
        self.cap = cap
        self.hit = False
        self._wake: anyio.Event | None = None

    def arm(self, wake: anyio.Event) -> None:
        self._wake = wake

    def __call__(self, amount: float) -> None:
        if self.cap is not None and amount > self.cap:
            self.hit = True
            if self._wake is not None:
                self._wake.set()


async def prompt_turn(
    connection: Connection, client: EvalClient, session_id: str, text: str, budget: float, cost: CostGuard
) -> Attempt:
    """One `session/prompt`, cancelled if it outlives `budget` seconds or the cost cap."""
    attempt = Attempt()
    client.new_turn()
    done, wake = anyio.Event(), anyio.Event()
    cost.arm(wake)
    started = time.monotonic()

    async def send() -> None:
        params: dict[str, Any] = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
        try:
            reply = await connection.request("session/prompt", params)
            attempt.stop_reason = reply.get("stopReason") if isinstance(reply, dict) else None
        except ConnectionClosed:
            attempt.error = "the agent exited during the turn"
        except RequestError as exc:
            attempt.error = f"session/prompt failed with {exc.code}: {exc.message}"
        finally:
            done.set()
            wake.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(send)
        if cost.hit:
            wake.set()
        with anyio.move_on_after(max(budget, 0.0)):
            await wake.wait()
        if not done.is_set():
            attempt.limit_hit = "cost_limit" if cost.hit else "timeout"
            client.cancelling = True
            with contextlib.suppress(ConnectionClosed):
                await connection.notify("session/cancel", {"sessionId": session_id})
            with anyio.move_on_after(CANCEL_GRACE):
                await done.wait()
            if not done.is_set():
                attempt.error = f"no answer to session/prompt {CANCEL_GRACE:g} s after session/cancel"
                tg.cancel_scope.cancel()
    attempt.agent_seconds = round(time.monotonic() - started, 3)
    return attempt
