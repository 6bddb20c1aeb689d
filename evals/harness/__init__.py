"""The eval harness: spawns `coder-agent acp` per trial and drives it as an ACP client (see evals/README.md).

Public pieces, for suites and tests that build on it:

- `Task`, `TaskConfig`, `Suite`, `DirectorySuite`, `register_suite`, `load_suite`: where tasks come from;
- `RunConfig`, `run_eval`: a run; `TrialResult`: what each trial leaves;
- `check_tasks`: the model-free soundness check of a suite.
"""

from __future__ import annotations

from .check import check_tasks
from .config import RunConfig
from .results import TrialResult
from .runner import run_eval
from .suite import DirectorySuite, Suite, load_suite, register_suite
from .task import Task, TaskConfig

__all__ = [
    "DirectorySuite",
    "RunConfig",
    "Suite",
    "Task",
    "TaskConfig",
    "TrialResult",
    "check_tasks",
    "load_suite",
    "register_suite",
    "run_eval",
]
