"""The agent's own git calls, as the commands they run: nothing the checkout configures ever runs.

The project may be someone else's, and its `.git/config` (with every file it includes, however that changes
during the session) and its `.gitattributes` name programs that plain `git status`, `diff` or `show` run: clean
and process filters, an fsmonitor hook, textconv and external diff drivers, a lazy fetch's transport. So each
call is two commands, made here and run by `git.py` (anyio) or `run_now` (blocking, for the early first call):

1. `git config` lists, at that moment, the config keys that name such programs under a name of the checkout's
   choosing (`filter.<driver>.clean`, `protocol.<name>.allow`); reading config runs nothing. No cache: a cache
   keyed on some files' state misses an included file, an `includeIf`, a branch switch.
2. the call itself, with each key found overridden (`GIT_CONFIG_COUNT`: a driver's name may hold `=`, which a
   `-c name=value` would split at), the fixed keys switched off on the command line (fsmonitor, hooks, bare
   repositories found by walking up, submodule recursion, every transport), the diff machinery's program
   hooks off by flag, and the work tree pinned to the folder that holds `.git` (a `core.worktree` pointing at
   the user's home would list and diff the files there).

Between 1 and 2 only a process already running could change the config: one the user let run, which can run
what it likes without git's help. git >= 2.40 could also read attributes from an empty tree (`--attr-source`);
git 2.39 (Debian 12) cannot, and the overrides cover both. A call that fails says why, briefly (`GitAnswer`).
Standard library only: the early first call runs these before the runtime is imported.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Generator, Sequence
from typing import NamedTuple

from ..kit.credentials import child_environment

GIT_TIMEOUT = 3.0
MAX_REASON_CHARS = 200

NEUTRAL = (
    *("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "core.untrackedCache=false"),
    # a folder of the checkout laid out as a bare repository (HEAD, config, objects/) is not used as one
    *("-c", "safe.bareRepository=explicit"),
    *("-c", "submodule.recurse=false", "-c", "status.submoduleSummary=false", "-c", "log.showSignature=false"),
    # a partial clone fetches missing objects on demand, through a transport the config chooses: none
    *("-c", "protocol.allow=never"),
)
# The flags that keep each subcommand's diff machinery from running a driver's program or a submodule's git.
FLAGS = {
    "diff": ("--no-ext-diff", "--no-textconv", "--ignore-submodules=all"),
    "show": ("--no-ext-diff", "--no-textconv"),
    "status": ("--ignore-submodules=all",),
}
PROGRAM_KEYS = r"^(filter\..+\.(clean|smudge|process)|protocol\..+\.allow)$"
KEYS_QUERY = ("config", "-z", "--name-only", "--get-regexp", PROGRAM_KEYS)


class GitAnswer(NamedTuple):
    """What a git call printed (None: it failed), and why it failed, in a few words."""

    output: bytes | None
    error: str = ""


class Finished(NamedTuple):
    """One command run: its exit code (None: it could not start, or took too long), stdout, stderr."""

    code: int | None
    stdout: bytes
    stderr: bytes


Step = tuple[list[str], dict[str, str]]
"""A command to run in the call's folder, and its whole environment."""


def git_environment(overrides: Sequence[tuple[str, str]] = ()) -> dict[str, str]:
    """The environment of the agent's own git calls: none of its credentials, no optional locks, no prompts, no
    lazy fetch (git 2.39.4 and later), and `overrides` as config given on the command line."""
    environment = {**child_environment(), "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"}
    environment["GIT_NO_LAZY_FETCH"] = "1"
    if overrides:
        count = environment.get("GIT_CONFIG_COUNT", "0")
        start = int(count) if count.isdigit() else 0  # the user's own -c's come first (git refuses a bad count)
        for index, (key, value) in enumerate(overrides, start):
            environment[f"GIT_CONFIG_KEY_{index}"] = key
            environment[f"GIT_CONFIG_VALUE_{index}"] = value
        environment["GIT_CONFIG_COUNT"] = str(start + len(overrides))
    return environment


def overrides_of(keys: bytes) -> list[tuple[str, str]]:
    """Each key `KEYS_QUERY` printed (NUL-separated), with the value that switches its program off."""
    found = []
    for name in keys.decode("utf-8", "surrogateescape").split("\0"):
        if name.startswith("filter."):
            found.append((name, ""))  # an empty command: the content goes through as it is
        elif name.startswith("protocol."):
            found.append((name, "never"))
    return found


def _is_git_entry(path: str) -> bool:
    """Whether git would take `path` (a `.git`) for a repository: a folder with a HEAD, or a `gitdir:` file."""
    if os.path.isdir(path):
        return os.path.lexists(os.path.join(path, "HEAD"))
    if not os.path.lexists(path):
        return False
    from ..kit.untrusted import read_capped  # here: a `.git` file is rare, and its import (dataclasses) is not light

    try:
        return read_capped(path, 8).data == b"gitdir: "
    except OSError:  # missing, a pipe, a device: not one
        return False


def work_tree_of(cwd: str, environment: dict[str, str]) -> str | None:
    """The folder holding the `.git` that git finds from `cwd`, where the calls pin the work tree (None: no
    such folder, or the user's environment chose the repository itself)."""
    if "GIT_DIR" in environment or "GIT_WORK_TREE" in environment:
        return None
    folder = os.path.abspath(cwd)
    while True:
        if _is_git_entry(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def command_line(work_tree: str | None, args: Sequence[str]) -> list[str]:
    """`git ARGS` with the fixed keys switched off, the work tree pinned, and the subcommand's safety flags."""
    pinned = [f"--work-tree={work_tree}"] if work_tree is not None else []
    subcommand, *rest = args
    return ["git", *NEUTRAL, *pinned, subcommand, *FLAGS.get(subcommand, ()), *rest]


def reason(done: Finished) -> str:
    """Why a command failed, in a line for the user and the model: git's first line of complaint, shortened and
    with nothing that could break the line it is shown in (the checkout chooses the names in it)."""
    lines = [line.strip() for line in done.stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    complaints = [line for line in lines if line.startswith(("fatal: ", "error: "))]  # not a warning before
    text = (complaints or lines or [f"it exited with code {done.code}"])[0]
    for prefix in ("fatal: ", "error: "):
        text = text.removeprefix(prefix)
    text = "".join(char if char.isprintable() else "?" for char in text)
    return text if len(text) <= MAX_REASON_CHARS else text[: MAX_REASON_CHARS - 3] + "..."


def _why(done: Finished) -> str:
    return reason(done) if done.code is not None else done.stderr.decode()


def git_steps(cwd: str, args: Sequence[str]) -> Generator[Step, Finished, GitAnswer]:
    """The call `git ARGS` in `cwd` as its commands: send each one's `Finished`, get the next; the answer comes
    back as the generator's value (`run_now` and `git.git_answer` drive it)."""
    base = git_environment()
    work_tree = work_tree_of(cwd, base)
    found = yield command_line(work_tree, KEYS_QUERY), base
    if found.code not in (0, 1):  # 1: no such key; else which programs to switch off is not known: no call
        return GitAnswer(None, f"git config failed: {_why(found)}")
    done = yield command_line(work_tree, args), git_environment(overrides_of(found.stdout))
    return GitAnswer(done.stdout) if done.code == 0 else GitAnswer(None, _why(done))


def too_long(args: Sequence[str], timeout: float) -> str:
    return f"git {args[0]} took longer than {timeout:g} s"


def could_not_start(exc: OSError) -> Finished:
    return Finished(None, b"", f"git could not be run: {exc.strerror or exc}".encode())


def run_now(cwd: str, args: Sequence[str], timeout: float = GIT_TIMEOUT) -> GitAnswer:
    """`git_steps` run with subprocess, blocking; the whole call within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    steps = git_steps(cwd, args)
    step = next(steps)
    while True:
        command, environment = step
        try:
            ran = subprocess.run(
                command,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                env=environment,
                timeout=max(deadline - time.monotonic(), 0.001),
                check=False,
            )
            done = Finished(ran.returncode, ran.stdout, ran.stderr)
        except subprocess.TimeoutExpired:
            steps.close()
            return GitAnswer(None, too_long(args, timeout))
        except OSError as exc:
            done = could_not_start(exc)
        try:
            step = steps.send(done)
        except StopIteration as stop:
            answer: GitAnswer = stop.value
            return answer
