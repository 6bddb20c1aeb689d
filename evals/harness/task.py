"""One eval task: its `task.toml`, its instruction, and where its files are.

A task folder holds:

- `task.toml`: id, description, optional session `mode`, `[timeouts]`, `[limits]` and `[verifier] command`;
- `instruction.md`: the prompt the agent gets;
- `workspace/`: the starting files (copied fresh for every trial);
- `tests/`: hidden from the agent; copied in only to verify;
- `solution/`: the oracle, `solution.patch` (applied with `git apply`) or `solve.sh` (run in the workspace);
- `golden.json` / `null.json`: scripted-model `Script`s for offline runs (one that solves it, one that does not);
- `environment/`: optional, a `Dockerfile` (and what it copies) for `--sandbox docker`: the system the trial runs
  in (default: the evals' base image, Debian with Python and pytest).

A generated task (built at run time by a suite) may point each part anywhere: `Task` only holds paths.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import one_line

ScriptKind = Literal["golden", "null"]


class Timeouts(BaseModel):
    model_config = ConfigDict(extra="forbid")

    start_seconds: float = Field(default=60.0, gt=0, description="spawn -> initialize -> session ready")
    verifier_seconds: float = Field(default=120.0, gt=0, description="the verifier (and the oracle solution)")


class Limits(BaseModel):
    model_config = ConfigDict(extra="forbid")

    wall_clock_seconds: float = Field(default=600.0, gt=0, description="agent time, all attempts together")
    max_cost_usd: float | None = Field(default=2.0, gt=0, description="from usage_update.cost; None: no cap")
    max_turn_requests: int = Field(default=60, ge=1, description="model calls per prompt turn (agent setting)")


class Verifier(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str = Field(min_length=1, description="run by /bin/sh -c in the workspace; exit 0 = resolved")
    needs: list[str] = Field(
        default_factory=list, description="Python modules the command needs `python` to import (pytest is implied)"
    )


class TaskConfig(BaseModel):
    """The contents of `task.toml`."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    description: str
    mode: str | None = Field(default=None, description="session mode set before prompting, e.g. plan")
    tags: list[str] = Field(default_factory=list)
    timeouts: Timeouts = Field(default_factory=Timeouts)
    limits: Limits = Field(default_factory=Limits)
    verifier: Verifier


class TaskError(Exception):
    """A task folder that cannot be used; the message says why."""


@dataclass(frozen=True)
class Task:
    config: TaskConfig
    instruction: str
    workspace_dir: Path
    tests_dir: Path | None
    solution_dir: Path | None
    scripts: dict[str, Path]  # "golden" / "null" -> Script JSON
    environment_dir: Path | None = None  # a folder with a Dockerfile, for --sandbox docker

    @property
    def id(self) -> str:
        return self.config.id

    def script(self, kind: ScriptKind) -> Path:
        path = self.scripts.get(kind)
        if path is None:
            raise TaskError(f"task {self.id} has no {kind}.json for offline runs")
        return path

    @classmethod
    def from_dir(cls, root: Path) -> Task:
        """Load a task folder (see the module docstring)."""
        try:
            config = TaskConfig.model_validate(tomllib.loads((root / "task.toml").read_text(encoding="utf-8")))
            instruction = (root / "instruction.md").read_text(encoding="utf-8")
        except ValidationError as exc:
            raise TaskError(f"{root / 'task.toml'}: {one_line(exc)}") from exc
        except (OSError, ValueError) as exc:
            raise TaskError(f"{root}: {exc}") from exc
        if not (root / "workspace").is_dir():
            raise TaskError(f"{root}: no workspace/ folder")

        def folder(name: str) -> Path | None:
            return root / name if (root / name).is_dir() else None

        scripts = {kind: root / f"{kind}.json" for kind in ("golden", "null") if (root / f"{kind}.json").is_file()}
        environment = root / "environment" if (root / "environment" / "Dockerfile").is_file() else None
        return cls(config, instruction, root / "workspace", folder("tests"), folder("solution"), scripts, environment)
