"""Running git in the user's project without running what the project configures.

A checkout can name commands in its config and attributes that plain `git status` runs. What the agent's own
git calls run, and why that is nothing the checkout chose, is `git_calls` (stdlib, shared with the synchronous
`run_now` of the early first call); this runs those commands on anyio.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence

import anyio

from ...prestart.git_calls import GIT_TIMEOUT, Finished, GitAnswer, could_not_start, git_steps, too_long


async def _finished(cwd: str, command: list[str], environment: dict[str, str]) -> Finished:
    try:
        done = await anyio.run_process(command, cwd=cwd, stdin=subprocess.DEVNULL, check=False, env=environment)
    except OSError as exc:
        return could_not_start(exc)
    return Finished(done.returncode, done.stdout, done.stderr)


async def _answer(cwd: str, args: Sequence[str]) -> GitAnswer:
    steps = git_steps(cwd, args)
    step = next(steps)
    while True:
        done = await _finished(cwd, *step)
        try:
            step = steps.send(done)
        except StopIteration as stop:
            answer: GitAnswer = stop.value
            return answer


async def git_answer(cwd: str, *args: str, timeout: float = GIT_TIMEOUT) -> GitAnswer:
    """`git ARGS` run in `cwd` with the project's commands switched off: its stdout, or why it failed."""
    with anyio.move_on_after(timeout):
        return await _answer(cwd, args)
    return GitAnswer(None, too_long(args, timeout))


async def git_output(cwd: str, *args: str, timeout: float = GIT_TIMEOUT) -> bytes | None:
    """`git_answer`'s output: None when git failed."""
    return (await git_answer(cwd, *args, timeout=timeout)).output
