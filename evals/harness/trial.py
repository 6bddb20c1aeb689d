"""One trial: a fresh workspace, the agent spawned and driven over ACP, then the hidden tests; here, or with the
agent, its commands and the verifier in a container of the trial's own (`sandbox.py`).

With `retries`, a failing verification is sent back to the agent as a new prompt in the same session (the
verifier's output, cut to its end), and the workspace is verified again.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path

import anyio

from coder_agent.acp.jsonrpc import Connection

from .agent_process import launch_agent
from .client import EvalClient
from .config import RunConfig, agent_env
from .fs import FileService
from .offline import scripted_model
from .results import Attempt, TrialResult, failure_mode, trial_dir
from .sandbox import Sandbox, SandboxPlan
from .session import CostGuard, SessionStartError, open_session, prompt_turn
from .task import Task
from .trajectory import write_trajectory
from .verify import TrialPaths, run_verifier, task_env
from .wire import WireLog
from .workspace import WorkspaceError, prepare_workspace, workspace_diff

log = logging.getLogger(__name__)

RETRY_OUTPUT_CHARS = 6000
STDERR_TAIL = 3000


def retry_prompt(output: str) -> str:
    tail = output[-RETRY_OUTPUT_CHARS:]
    return (
        "The task is not done yet: the hidden tests still fail. This is the end of their output:\n\n"
        f"```\n{tail.rstrip()}\n```\n\nFix the problem."
    )


def _stderr_tail(folder: Path) -> str:
    try:
        return (folder / "agent.stderr.log").read_text(encoding="utf-8", errors="replace")[-STDERR_TAIL:]
    except OSError:
        return ""


def _unwrap(exc: BaseException) -> BaseException:
    """The one exception inside the (nested) groups that task groups wrap errors in."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


async def run_trial(
    config: RunConfig, task: Task, trial: int, run_dir: Path, plan: SandboxPlan | None = None
) -> TrialResult:
    """Run one trial and save its result.json (a harness failure is a result too, never an exception)."""
    folder = trial_dir(run_dir, task.id, trial).resolve()
    if folder.exists():  # an interrupted trial: start it again from scratch
        await anyio.to_thread.run_sync(shutil.rmtree, folder)
    folder.mkdir(parents=True)
    result = TrialResult(task=task.id, trial=trial, profile=config.profile, model=config.model_name)
    started = time.monotonic()
    try:
        await _run(config, task, TrialPaths(folder), result, plan or SandboxPlan())
    except Exception as exc:
        cause = _unwrap(exc)
        if isinstance(cause, SessionStartError):
            result.error = f"{cause}\n{_stderr_tail(folder)}".strip()
            result.failure_mode = "agent_error"
        else:
            result.error = f"{type(cause).__name__}: {cause}"
            result.failure_mode = "harness_error"
    result.total_seconds = round(time.monotonic() - started, 3)
    if result.failure_mode is None:
        result.failure_mode = failure_mode(result)
    try:
        await anyio.to_thread.run_sync(write_trajectory, folder, config.model_name)
    except (OSError, ValueError) as exc:  # the transcript stays the record
        log.warning("no trajectory.json for %s: %s", folder, exc)
    result.save(folder)
    return result


async def _run(config: RunConfig, task: Task, paths: TrialPaths, result: TrialResult, plan: SandboxPlan) -> None:
    folder = paths.root
    workspace = await prepare_workspace(task.workspace_dir, paths.workspace)
    paths.home.mkdir()
    async with AsyncExitStack() as stack:
        sandbox = await stack.enter_async_context(plan.open(task, folder))
        api_base = None
        if config.offline is not None:
            script = task.script(config.offline)
            serving = scripted_model(script, folder / "model.log", host=sandbox.model_host)
            api_base = await stack.enter_async_context(serving)
        env = agent_env(config, task, paths.home, api_base)
        wire = WireLog(folder / "transcript.jsonl")
        stack.callback(wire.close)
        tasks = await stack.enter_async_context(anyio.create_task_group())
        terminals = sandbox.terminals(workspace, task_env(task, paths, env), tasks)
        cost = CostGuard(task.config.limits.max_cost_usd)
        client = EvalClient(config.profile, config.permission, FileService(workspace), terminals, cost)
        try:
            command, launch_env = sandbox.agent_launch(env, workspace)
            stderr = folder / "agent.stderr.log"
            agent_cm = launch_agent(client, wire, env=launch_env, cwd=folder, stderr_path=stderr, command=command)
            async with agent_cm as agent:
                session_id = await open_session(agent.connection, client, task, str(workspace))
                turns = _Turns(config, task, paths, result, client, agent.connection, session_id, cost, sandbox)
                await turns.run()
            result.agent_killed = agent.killed
        finally:
            await terminals.close()
            _observed(result, client, wire)


def _observed(result: TrialResult, client: EvalClient, wire: WireLog) -> None:
    """What the client saw and the schema checker found, into the result (whatever happened before)."""
    seen = client.seen
    result.schema_violations = wire.violations
    result.protocol_violations += seen.protocol_violations
    result.tool_calls, result.model_requests, result.tokens = seen.tool_calls, seen.model_requests, seen.tokens
    result.cost_usd, result.permission_requests = seen.cost_usd, seen.permission_requests
    result.input_tokens, result.cached_tokens, result.output_tokens = (
        seen.input_tokens,
        seen.cached_tokens,
        seen.output_tokens,
    )


@dataclass
class _Turns:
    """The prompt, then (with retries) the verifier's complaints, each followed by a verification."""

    config: RunConfig
    task: Task
    paths: TrialPaths
    result: TrialResult
    client: EvalClient
    connection: Connection
    session_id: str
    cost: CostGuard
    sandbox: Sandbox

    async def run(self) -> None:
        prompt = self.task.instruction
        for number in range(1, self.config.retries + 2):
            attempt = await self._prompt(number, prompt)
            await self._save_outputs()
            log_name = "verifier.log" if number == 1 else f"verifier-{number}.log"
            verdict = await run_verifier(self.task, self.paths, self.paths.root / log_name, self.sandbox.run)
            attempt.verifier_exit_code, attempt.verifier_timed_out = verdict.exit_code, verdict.timed_out
            attempt.verifier_seconds, attempt.passed = round(verdict.seconds, 3), verdict.ok
            self.result.resolved = verdict.ok
            if verdict.ok or attempt.error is not None or attempt.limit_hit is not None:
                return
            prompt = retry_prompt(verdict.output)

    async def _prompt(self, number: int, text: str) -> Attempt:
        result = self.result
        budget = self.task.config.limits.wall_clock_seconds - result.wall_seconds
        attempt = await prompt_turn(self.connection, self.client, self.session_id, text, budget, self.cost)
        result.attempts.append(attempt)
        result.wall_seconds = round(result.wall_seconds + attempt.agent_seconds, 3)
        result.stop_reason = attempt.stop_reason
        if attempt.error is not None:
            attempt.error = f"{attempt.error}\n{_stderr_tail(self.paths.root)}".strip()
        live = self.client.terminals.live_ids()
        if live and attempt.error is None and attempt.limit_hit is None:
            result.protocol_violations.append(f"turn {number} ended with terminals unreleased: {', '.join(live)}")
        return attempt

    async def _save_outputs(self) -> None:
        """The agent's final message, its last plan and its change, for verifiers and `export-preds`."""
        paths, seen = self.paths, self.client.seen
        await anyio.Path(paths.answer).write_text(seen.answer, encoding="utf-8")
        if seen.plan is not None:
            await anyio.Path(paths.plan).write_text(json.dumps(seen.plan, indent=2) + "\n", encoding="utf-8")
        try:
            patch = await workspace_diff(paths.workspace)
        except WorkspaceError as exc:  # e.g. the agent removed .git: the diff is lost, the trial is not
            patch = ""
            log.warning("no model.patch for %s: %s", paths.root, exc)
        await anyio.Path(paths.root / "model.patch").write_text(patch, encoding="utf-8")
