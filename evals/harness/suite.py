"""Suites: named sources of tasks. A folder of task folders is one; a suite may also build its tasks at run time.

`load_suite(spec)` resolves, in order:

1. a name given to `register_suite(name, factory)`;
2. `evals/suites/<name>/suite.py` defining `load_suite() -> Suite` (for generated suites, e.g. humaneval);
3. `evals/suites/<name>/`, a folder of task folders;
4. a path to a folder of task folders, or to a single task folder.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from .task import Task, TaskError

SUITES_DIR = Path(__file__).resolve().parents[1] / "suites"


class Suite(Protocol):
    @property
    def name(self) -> str: ...

    def tasks(self) -> Iterable[Task]: ...


@dataclass(frozen=True)
class DirectorySuite:
    """Every sub-folder of `root` that holds a `task.toml` (or `root` itself, if it is one task)."""

    name: str
    root: Path

    def tasks(self) -> Iterable[Task]:
        if (self.root / "task.toml").is_file():
            yield Task.from_dir(self.root)
            return
        for folder in sorted(self.root.iterdir()):
            if (folder / "task.toml").is_file():
                yield Task.from_dir(folder)


_REGISTRY: dict[str, Callable[[], Suite]] = {}


def register_suite(name: str, factory: Callable[[], Suite]) -> None:
    _REGISTRY[name] = factory


def _from_module(name: str, path: Path) -> Suite:
    spec = importlib.util.spec_from_file_location(f"evals.suites.{name}.suite", path)
    if spec is None or spec.loader is None:
        raise TaskError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    factory = getattr(module, "load_suite", None)
    if not callable(factory):
        raise TaskError(f"{path} defines no load_suite()")
    suite: Suite = factory()
    return suite


class UnknownSuiteError(TaskError):
    """`--suite` names nothing the harness can load."""


def _holds_tasks(folder: Path) -> bool:
    """A task folder, or a folder with at least one task folder in it."""
    return (folder / "task.toml").is_file() or any((sub / "task.toml").is_file() for sub in folder.iterdir())


def known_suites() -> list[str]:
    """The names `load_suite` takes: registered ones, and the folders of evals/suites that are suites."""
    named = [f.name for f in SUITES_DIR.iterdir() if f.is_dir() and ((f / "suite.py").is_file() or _holds_tasks(f))]
    return sorted({*_REGISTRY, *named})


def load_suite(spec: str) -> Suite:
    if spec in _REGISTRY:
        return _REGISTRY[spec]()
    named = SUITES_DIR / spec
    if (named / "suite.py").is_file():
        return _from_module(spec, named / "suite.py")
    if named.is_dir() and _holds_tasks(named):
        return DirectorySuite(named.name, named)  # `spec` may be an absolute path: name the suite by its folder
    path = Path(spec)
    if path.is_dir() and _holds_tasks(path):
        return DirectorySuite(path.resolve().name, path.resolve())
    raise UnknownSuiteError(
        f"unknown suite {spec!r}: the known suites are {', '.join(known_suites())} "
        "(or give the path of a folder of task folders)"
    )


def select_tasks(suite: Suite, only: Sequence[str] = ()) -> list[Task]:
    """The suite's tasks, or just those named in `only` (an unknown name is an error)."""
    tasks = list(suite.tasks())
    if not only:
        return tasks
    by_id = {task.id: task for task in tasks}
    missing = [name for name in only if name not in by_id]
    if missing:
        raise TaskError(f"suite {suite.name} has no task {', '.join(missing)}")
    return [by_id[name] for name in only]
