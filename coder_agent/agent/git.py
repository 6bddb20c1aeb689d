"""Running git in the user's project without running what the project configures.

A checkout can name commands in its `.git/config` and `.gitattributes` that plain `git status` runs: an
fsmonitor hook, clean/smudge/process filters. The project may be someone else's, so the agent's own git calls
switch those off (a `-c` on the command line wins over every config file), never look into submodules, take no
optional locks, and get none of the agent's credentials. The command lines and the environment are
`project_facts`' (stdlib, shared with the synchronous `git_output_now`); this runs them on anyio.
"""

from __future__ import annotations

import subprocess

import anyio

from .project_facts import (
    GIT_TIMEOUT,
    config_state,
    drivers_command,
    git_command,
    git_environment,
    known_drivers,
    parse_drivers,
    remember_drivers,
)


async def _run(cwd: str, command: list[str], timeout: float) -> bytes | None:
    with anyio.move_on_after(timeout):
        try:
            done = await anyio.run_process(
                command,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=False,
                env=git_environment(),
            )
        except OSError:
            return None
        return done.stdout if done.returncode == 0 else None
    return None


async def _drivers_of(cwd: str, timeout: float) -> list[str]:
    """The filter drivers, asked of git again only when a config file changed (a command may add one)."""
    state = await anyio.to_thread.run_sync(config_state, cwd)
    drivers = known_drivers(cwd, state)
    if drivers is None:
        drivers = parse_drivers(await _run(cwd, drivers_command(), timeout))
        remember_drivers(cwd, state, drivers)
    return drivers


async def git_output(cwd: str, *args: str, timeout: float = GIT_TIMEOUT) -> bytes | None:
    """`git ARGS` run in `cwd` with the project's commands switched off; its stdout, or None if it failed."""
    return await _run(cwd, git_command(args, await _drivers_of(cwd, timeout)), timeout)
