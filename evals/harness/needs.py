"""What the harness needs from this machine, checked before any trial starts (and before a run folder exists).

A verifier runs `python` from the verifiers' PATH (the harness interpreter's folder comes first), so each module
a verifier imports must be importable by that interpreter. Without it every verifier fails, and the run would
score that as the agent failing the task. A task lists its verifier's modules in `[verifier] needs`; pytest is
implied when the command runs it. Trials also need git (each workspace is a repository) and, for the wire
checks, the ACP v1 schema.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence

from .acp_schema import SchemaUnavailableError, find_schema_path
from .docker import missing_in_image
from .procs import tool_path
from .sandbox import SandboxPlan
from .task import Task, TaskError

TEST_EXTRA = "pip install -e '.[test]'"  # from the checkout: pytest and the rest of what the suites use
_RUNS_PYTEST = re.compile(r"\bpytest\b")
_FIND = """\
import importlib.util, sys
for name in sys.argv[1:]:
    try:
        found = importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        print(name)
"""
_TIMEOUT = 60.0


class UnmetNeedsError(TaskError):
    """The machine lacks something every trial (or every verifier) needs; the message says how to add it."""


def verifier_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The PATH and environment a verifier gets (see verify.task_env), as far as finding `python` goes."""
    env = dict(os.environ if base is None else base)
    return {**env, "PATH": tool_path(env)}


def verifier_python(env: Mapping[str, str] | None = None) -> str | None:
    """The `python` a verifier's `/bin/sh -c` finds, or None when there is none."""
    return shutil.which("python", path=verifier_env(env)["PATH"])


def verifier_modules(task: Task) -> list[str]:
    """The modules the task's verifier imports in `python`: its declared needs, and pytest if it runs it."""
    declared = task.config.verifier.needs
    implied = ["pytest"] if _RUNS_PYTEST.search(task.config.verifier.command) else []
    return sorted({*declared, *implied})


def missing_modules(python: str, modules: Sequence[str], env: Mapping[str, str] | None = None) -> list[str]:
    """Those of `modules` that `python` cannot import (asked in a fresh process of that interpreter)."""
    if not modules:
        return []
    done = subprocess.run(
        [python, "-c", _FIND, *modules],
        cwd="/",  # not the harness's folder: a stray pytest.py there is not what a verifier would import
        env=verifier_env(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=_TIMEOUT,
        check=False,
    )
    if done.returncode != 0:
        raise OSError(f"{python} could not look for {', '.join(modules)}: {done.stderr.strip()[-500:]}")
    return done.stdout.split()


def _install_hint(python: str, module: str) -> str:
    direct = f"{python} -m pip install {module}"
    return f"`{TEST_EXTRA}` (the test extra) or `{direct}`" if module == "pytest" else f"`{direct}`"


def _missing_for(python: str, users: Mapping[str, list[str]], env: Mapping[str, str] | None) -> list[str]:
    """One line per module (of `users`: module -> the tasks needing it) that `python` cannot import."""
    try:
        missing = missing_modules(python, sorted(users), env)
    except (OSError, subprocess.SubprocessError) as exc:
        return [f"cannot run {python}, which runs the verifiers: {exc}"]
    lines = []
    for module in missing:
        ids = users[module]
        shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
        lines.append(
            f"{module} is not importable by {python}, which runs the verifiers (needed by {shown}): "
            f"install it with {_install_hint(python, module)}"
        )
    return lines


def unmet_needs(
    tasks: Sequence[Task],
    python: str | None = None,
    *,
    schema: bool = False,
    env: Mapping[str, str] | None = None,
    verifiers: bool = True,
) -> list[str]:
    """What is missing to run `tasks`' trials (schema=True) or just their verifiers; each with how to add it.

    `python` is the interpreter the verifiers run (default: the one they find on their PATH); verifiers=False
    leaves them out (they run in a container: `require_in_images` checks its image).
    """
    problems: list[str] = []
    path = verifier_env(env)["PATH"]
    if shutil.which("git", path=path) is None:
        problems.append("git is not on PATH (each trial's workspace is a git repository): install git")
    users: dict[str, list[str]] = {}
    for task in tasks:
        for module in verifier_modules(task):
            users.setdefault(module, []).append(task.id)
    python = python or verifier_python(env)
    if verifiers and python is None:
        problems.append(f"no `python` on PATH ({path}) for the verifiers to run: put one first on PATH")
    elif verifiers and python is not None and users:
        problems += _missing_for(python, users, env)
    if schema:
        try:
            find_schema_path()
        except SchemaUnavailableError as exc:
            problems.append(str(exc))
    return problems


def require(
    tasks: Sequence[Task],
    python: str | None = None,
    *,
    schema: bool = False,
    env: Mapping[str, str] | None = None,
    verifiers: bool = True,
) -> None:
    """Raise UnmetNeedsError naming everything missing (see unmet_needs); nothing is started or created."""
    if problems := unmet_needs(tasks, python, schema=schema, env=env, verifiers=verifiers):
        raise UnmetNeedsError("cannot start: " + "; ".join(problems))


def require_in_images(tasks: Sequence[Task], plan: SandboxPlan) -> None:
    """The docker sandbox's counterpart of the verifier check: each task's image imports its verifier's modules."""
    users: dict[str, dict[str, list[str]]] = {}  # image -> module -> the tasks needing it
    for task in tasks:
        for module in verifier_modules(task):
            users.setdefault(plan.images[task.id].tag, {}).setdefault(module, []).append(task.id)
    problems = []
    for image, modules in users.items():
        for module in missing_in_image(image, sorted(modules)):
            needed_by = ", ".join(modules[module])
            problems.append(f"{module} is not importable by `python` in {image} (needed by {needed_by})")
    if problems:
        raise UnmetNeedsError("cannot start: " + "; ".join(problems) + ": install them in the task's environment")
