"""Running git in the user's project without running what the project configures.

A checkout can name commands in its `.git/config` and `.gitattributes` that plain `git status` runs: an
fsmonitor hook, clean/smudge/process filters. The project may be someone else's, so the agent's own git calls
switch those off (a `-c` on the command line wins over every config file), never look into submodules, take no
optional locks, and get none of the agent's credentials.
"""

from __future__ import annotations

import os
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


_drivers: dict[str, tuple[tuple[str, ...], list[str]]] = {}  # cwd -> (what the config files were, drivers)


def _config_state(cwd: str) -> tuple[str, ...]:
    """Where the config files that could define drivers are, with their sizes and times: a change shows here."""
    state = []
    for folder in (cwd, *_parents(cwd)):
        dot_git = os.path.join(folder, ".git")
        if os.path.exists(dot_git):
            for name in (os.path.join(dot_git, "config"), dot_git):
                try:
                    info = os.stat(name)
                except OSError:
                    continue
                state.append(f"{name}:{info.st_size}:{info.st_mtime_ns}")
            break
    for name in (os.path.expanduser("~/.gitconfig"), os.environ.get("GIT_CONFIG_GLOBAL", "")):
        if name:
            try:
                info = os.stat(name)
                state.append(f"{name}:{info.st_size}:{info.st_mtime_ns}")
            except OSError:
                pass
    return tuple(state)


def _parents(path: str) -> list[str]:
    parents = []
    while (parent := os.path.dirname(path)) != path:
        parents.append(parent)
        path = parent
    return parents


async def _drivers_of(cwd: str, timeout: float) -> list[str]:
    """The filter drivers, asked of git again only when a config file changed (a command may add one)."""
    state = await anyio.to_thread.run_sync(_config_state, cwd)
    known = _drivers.get(cwd)
    if known is not None and known[0] == state and state:
        return known[1]
    drivers = await _filter_drivers(cwd, timeout)
    _drivers[cwd] = (state, drivers)
    return drivers


async def git_output(cwd: str, *args: str, timeout: float = 3.0) -> bytes | None:
    """`git ARGS` run in `cwd` with the project's commands switched off; its stdout, or None if it failed."""
    options = list(_NEUTRAL)
    for driver in await _drivers_of(cwd, timeout):
        for command in ("clean", "smudge", "process"):
            options += ["-c", f"filter.{driver}.{command}="]
    return await _run(cwd, ["git", *options, *args], timeout)
