"""What a run needs to be reproduced, in `RUN/provenance.json`, written when it starts (a resume adds its date):

- the agent: its version and the commit of the checkout it ran from (and whether that had changes not committed);
- the model and its settings: the model (or the offline script), and every `CODER_AGENT_*` setting passed on
  (values of keys and tokens masked), each task's request limit and mode;
- the suite and each task's version: a SHA-256 over the task's files (instruction, task.toml, workspace, tests,
  solution, scripts, environment), so two runs of "the same" suite can be told apart;
- the date, and the machine: host, OS, CPUs, memory, Python;
- the sandbox: local, or docker with the server's version and each task's image (the agent's wheel and its hash).

Per trial, `result.json` has the tokens (input, cached, output), cost and time, and `trajectory.json` the steps.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import platform
import re
import socket
import subprocess
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .config import REPO_ROOT, RunConfig
from .sandbox import SandboxPlan
from .task import Task

FILE = "provenance.json"
_SECRET = re.compile(r"KEY|TOKEN|SECRET|PASSWORD", re.IGNORECASE)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(REPO_ROOT), *args], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _files(paths: Iterable[Path | None]) -> Iterable[tuple[str, Path]]:
    for root in paths:
        if root is None or not root.exists():
            continue
        if root.is_file():
            yield root.name, root
            continue
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                yield f"{root.name}/{path.relative_to(root)}", path


def task_digest(task: Task) -> str:
    """SHA-256 over what makes the task what it is (see the module docstring)."""
    digest = hashlib.sha256()
    digest.update(task.config.model_dump_json().encode() + b"\0" + task.instruction.encode() + b"\0")
    parts = [task.workspace_dir, task.tests_dir, task.solution_dir, task.environment_dir, *task.scripts.values()]
    for name, path in _files(parts):
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _memory_bytes() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None


def _settings() -> dict[str, str]:
    return {
        name: "[set]" if _SECRET.search(name) else value
        for name, value in sorted(os.environ.items())
        if name.startswith("CODER_AGENT_")
    }


def _version() -> str:
    from coder_agent import __version__  # the package's top: no runtime is imported

    return __version__


def provenance(config: RunConfig, tasks: list[Task], plan: SandboxPlan) -> dict[str, Any]:
    sandbox: dict[str, Any] = {"kind": plan.kind}
    if plan.kind == "docker":
        from .docker import server_version

        sandbox["server_version"] = server_version()
        sandbox["images"] = {task_id: dataclasses.asdict(image) for task_id, image in plan.images.items()}
    return {
        "started_at": now(),
        "resumed_at": [],
        "agent": {
            "name": "coder-agent",
            "version": _version(),
            "commit": _git("rev-parse", "HEAD"),
            "uncommitted_changes": bool(_git("status", "--porcelain", "--untracked-files=no")),
        },
        "model": {
            "name": config.model_name,
            "model": config.model,
            "offline": config.offline,
            "settings": _settings(),
            "per_task": {
                t.id: {"max_turn_requests": t.config.limits.max_turn_requests, "mode": t.config.mode} for t in tasks
            },
        },
        "suite": {"name": config.suite, "tasks": {task.id: task_digest(task) for task in tasks}},
        "machine": {
            "host": socket.gethostname(),
            "os": platform.platform(),
            "cpus": os.cpu_count(),
            "memory_bytes": _memory_bytes(),
            "python": sys.version.split()[0],
        },
        "sandbox": sandbox,
    }


def record(run_dir: Path, config: RunConfig, tasks: list[Task], plan: SandboxPlan) -> None:
    """Write provenance.json, or add this resume's date to the one there."""
    path = run_dir / FILE
    if path.is_file():
        data = json.loads(path.read_text(encoding="utf-8"))
        data.setdefault("resumed_at", []).append(now())
    else:
        data = provenance(config, tasks, plan)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def finish(run_dir: Path) -> None:
    path = run_dir / FILE
    if path.is_file():
        data = json.loads(path.read_text(encoding="utf-8"))
        data["finished_at"] = now()
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def load(run_dir: Path) -> dict[str, Any] | None:
    path = run_dir / FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
