"""Import SWE-bench instances as eval task folders, from local git checkouts (no network).

    python -m evals.suites.swebench.importer INSTANCES.jsonl --repos DIR --out evals/suites/NAME \\
        [--instances ID,ID] [--python PYTHON] [--verifier-seconds S]
    python -m evals check-tasks --suite NAME
    python -m evals run --suite NAME --model ... && python -m evals export-preds RUN --out preds.jsonl

Each JSONL line is a SWE-bench instance: `instance_id`, `repo` (`owner/name`), `base_commit`,
`problem_statement`, `test_patch`, `FAIL_TO_PASS` and `PASS_TO_PASS` (test ids, as JSON lists or
JSON-encoded strings of lists) and `patch` (the gold fix). The repository must already be cloned under
`--repos`, as `DIR/owner__name`, `DIR/owner/name` or `DIR/name`. Each instance becomes `OUT/<instance_id>/`:

- `workspace/`: the repository at `base_commit` (a local clone, checked out, without its `.git`);
- `instruction.md`: the problem statement;
- `tests/`: `test.patch`, `instance.json` and `run_tests.py`, the verifier: it applies the test patch at
  verify time and grades by SWE-bench's rule (every FAIL_TO_PASS and PASS_TO_PASS test passes), then takes
  the test patch away again;
- `solution/solution.patch`: the gold patch (the oracle);
- `golden.json`: the gold patch through the agent's `apply_patch` tool; `null.json`: text only.

Assumption: the instances' tests run under pytest, by node id (`path::Class::test[param]`) from the
repository root; the Django/sympy-style test ids of some SWE-bench repos are not supported. The tests run
with `--python` (default: `python` on the verifier's PATH, i.e. the harness's interpreter), which must have
the repository's dependencies installed. The trial's `model.patch` is a diff against `base_commit`, so
`export-preds` writes SWE-bench predictions for these tasks as they are.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from coder_agent.scripted.script import Script
from evals.harness.scripting import answer_only, call, golden

HERE = Path(__file__).resolve().parent
VERIFIER_FILES = ("run_tests.py", "swebench_outcomes.py")
NOT_DONE = "I read the issue and the code, but I could not work out a fix, so I changed nothing."

TASK_TOML = """\
id = {id}
description = {description}
tags = ["swebench", {repo}]

[timeouts]
start_seconds = 60
verifier_seconds = {verifier_seconds}

[limits]
wall_clock_seconds = 1800
max_cost_usd = 3.0
max_turn_requests = 100

[verifier]
command = 'python "$EVAL_TESTS_DIR/run_tests.py"'
needs = {needs}
"""

INSTRUCTION = """\
Resolve the following issue in this repository ({repo}). Change the source code so the issue is fixed; \
hidden tests will check the fix, together with the repository's existing tests.

<issue>
{problem_statement}
</issue>
"""


class SwebenchImportError(RuntimeError):
    """An instance that cannot be imported; the message says why."""


def test_ids(value: Any) -> list[str]:
    """FAIL_TO_PASS / PASS_TO_PASS: a list, or (as in the SWE-bench datasets) a JSON string of one."""
    ids = json.loads(value) if isinstance(value, str) else value
    if not isinstance(ids, list) or not all(isinstance(item, str) for item in ids):
        raise SwebenchImportError(f"test ids must be a list of strings, not {value!r}")
    return ids


def read_instances(path: Path, only: Sequence[str] = ()) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if only:
        known = {row["instance_id"] for row in rows}
        missing = [name for name in only if name not in known]
        if missing:
            raise SwebenchImportError(f"{path} has no instance {', '.join(missing)}")
        rows = [row for row in rows if row["instance_id"] in only]
    return rows


def find_repo(repos: Path, repo: str) -> Path:
    owner, _, name = repo.partition("/")
    for candidate in (repos / f"{owner}__{name}", repos / owner / name, repos / (name or owner)):
        if (candidate / ".git").exists():
            return candidate
    raise SwebenchImportError(f"no git checkout of {repo} under {repos} (tried {owner}__{name}, {repo}, {name})")


def _git(cwd: Path, *args: str) -> None:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SwebenchImportError(f"git {' '.join(args)} in {cwd} failed: {done.stderr.strip()}")


def checkout(source: Path, commit: str, target: Path) -> None:
    """`target` = the repository at `commit`, without `.git` (a local clone: hard links, no network)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    _git(target.parent, "clone", "--local", "--no-checkout", "--quiet", str(source.resolve()), target.name)
    _git(target, "-c", "advice.detachedHead=false", "checkout", "--quiet", commit)
    shutil.rmtree(target / ".git")


def scripts(instance: dict[str, Any]) -> tuple[Script, Script]:
    final = "I fixed the issue in the source code; the change is in the workspace."
    return golden(call("apply_patch", patch=instance["patch"]), final=final), answer_only(NOT_DONE)


def import_instance(
    instance: dict[str, Any], repos: Path, out: Path, python: str | None = None, verifier_seconds: int = 900
) -> Path:
    """Write `out/<instance_id>/` (replacing it); returns that folder."""
    iid, repo = str(instance["instance_id"]), str(instance["repo"])
    root = out / iid
    if root.exists():
        shutil.rmtree(root)
    staging = out / f".{iid}.importing"
    if staging.exists():
        shutil.rmtree(staging)
    try:
        checkout(find_repo(repos, repo), instance["base_commit"], staging / "workspace")
        for sub in ("tests", "solution"):
            (staging / sub).mkdir()
        (staging / "task.toml").write_text(
            TASK_TOML.format(
                id=json.dumps(iid),
                description=json.dumps(f"SWE-bench {iid}: {repo} at {instance['base_commit'][:12]}"),
                repo=json.dumps(repo),
                verifier_seconds=verifier_seconds,
                # run_tests.py runs pytest under --python, else under the harness's python: then it needs pytest
                needs=json.dumps([] if python else ["pytest"]),
            ),
            encoding="utf-8",
        )
        text = INSTRUCTION.format(repo=repo, problem_statement=instance["problem_statement"].strip())
        (staging / "instruction.md").write_text(text, encoding="utf-8")
        (staging / "tests" / "test.patch").write_text(instance["test_patch"], encoding="utf-8")
        meta = {
            "instance_id": iid,
            "repo": repo,
            "base_commit": instance["base_commit"],
            "FAIL_TO_PASS": test_ids(instance["FAIL_TO_PASS"]),
            "PASS_TO_PASS": test_ids(instance["PASS_TO_PASS"]),
            "python": python,
            "timeout": max(10, verifier_seconds - 30),
        }
        (staging / "tests" / "instance.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        (staging / "tests" / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        for name in VERIFIER_FILES:
            shutil.copyfile(HERE / name, staging / "tests" / name)
        (staging / "solution" / "solution.patch").write_text(instance["patch"], encoding="utf-8")
        gold, null = scripts(instance)
        gold.save(staging / "golden.json")
        null.save(staging / "null.json")
        staging.rename(root)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return root


def import_instances(
    instances: Iterable[dict[str, Any]],
    repos: Path,
    out: Path,
    python: str | None = None,
    verifier_seconds: int = 900,
) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    return [import_instance(row, repos, out, python, verifier_seconds) for row in instances]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evals import-swebench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("instances", type=Path, help="a SWE-bench JSONL file (one instance a line)")
    parser.add_argument("--repos", type=Path, required=True, help="folder of local git clones")
    parser.add_argument("--out", type=Path, required=True, help="the suite folder to write task folders into")
    parser.add_argument("--instances", dest="only", default="", help="comma-separated instance ids (default: all)")
    parser.add_argument("--python", help="the interpreter the tests run with (default: the harness's)")
    parser.add_argument("--verifier-seconds", type=int, default=900)
    args = parser.parse_args(argv)
    only = [part.strip() for part in args.only.split(",") if part.strip()]
    try:
        rows = read_instances(args.instances, only)
        written = import_instances(rows, args.repos, args.out, args.python, args.verifier_seconds)
    except (SwebenchImportError, OSError, ValueError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for folder in written:
        print(folder)
    print(f"imported {len(written)} instance(s) into {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
