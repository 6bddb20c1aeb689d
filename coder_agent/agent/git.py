"""Running git in the user's project without running what the project configures.

A checkout can name commands in its `.git/config` and `.gitattributes` that plain `git status` runs: an
fsmonitor hook, clean/smudge/process filters. The project may be someone else's, so the agent's own git calls
switch those off (a `-c` on the command line wins over every config file), never look into submodules, take no
optional locks, and get none of the agent's credentials.
"""

from __future__ import annotations

import subprocess

import anyio

from ..credentials import child_environment

_NEUTRAL = ("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "core.untrackedCache=false")


async def _filter_drivers(cwd: str, timeout: float) -> list[str]:
    """Names of the filter drivers the project's config defines (reading config runs nothing)."""
    done = await _run(
        cwd, ["git", *_NEUTRAL, "config", "--get-regexp", r"^filter\..*\.(clean|smudge|process)$"], timeout
    )
    if done is None:
        return []
    drivers = set()
    for line in done.decode(errors="replace").splitlines():
        key = line.split(" ", 1)[0]  # filter.<driver>.<command>; the driver's name may hold dots
        drivers.add(key[len("filter.") : key.rfind(".")])
    return sorted(drivers)


async def _run(cwd: str, command: list[str], timeout: float) -> bytes | None:
    env = {**child_environment(), "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"}
    with anyio.move_on_after(timeout):
        try:
            done = await anyio.run_process(
                command, cwd=cwd, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=env
            )
        except OSError:
            return None
        return done.stdout if done.returncode == 0 else None
    return None


async def git_output(cwd: str, *args: str, timeout: float = 3.0) -> bytes | None:
    """`git ARGS` run in `cwd` with the project's commands switched off; its stdout, or None if it failed."""
    options = list(_NEUTRAL)
    for driver in await _filter_drivers(cwd, timeout):
        for command in ("clean", "smudge", "process"):
            options += ["-c", f"filter.{driver}.{command}="]
    return await _run(cwd, ["git", *options, *args], timeout)
