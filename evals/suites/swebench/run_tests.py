"""The verifier of an imported SWE-bench task (copied into its `tests/`; run in the trial's workspace).

1. The files the test patch touches are set to their base-commit versions (the agent's edits to them are put
   aside), and the test patch is applied, as SWE-bench's harness does.
2. pytest runs the FAIL_TO_PASS and PASS_TO_PASS tests by node id (`--rootdir` = the workspace), and a small
   plugin records each test's outcome.
3. The touched files are put back as they were, so a retry starts from the agent's own workspace.
4. SWE-bench's rule: resolved (exit 0) when every FAIL_TO_PASS and every PASS_TO_PASS test passed (or
   xfailed). A test that did not run (not found, collection error) counts as failed.

Standard library only: it runs under whatever `python` the task names (`instance.json`: `python`).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
GOOD = ("passed", "xfailed")


def touched_paths(patch: str) -> list[str]:
    """Every path (old and new side) named in the patch's `---`/`+++` headers."""
    paths = []
    for match in re.finditer(r"^(?:---|\+\+\+) (?:[ab]/)?(\S+)", patch, re.MULTILINE):
        if match.group(1) != "/dev/null":
            paths.append(match.group(1))
    return list(dict.fromkeys(paths))


def snapshot(paths: list[str]) -> dict[str, bytes | None]:
    return {path: Path(path).read_bytes() if Path(path).is_file() else None for path in paths}


def restore(saved: dict[str, bytes | None]) -> None:
    for path, data in saved.items():
        target = Path(path)
        if data is None:
            target.unlink(missing_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)


def run_pytest(instance: dict[str, Any], test_ids: list[str], outcomes_file: Path) -> int:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), *filter(None, [env.get("PYTHONPATH")])])
    env["SWEBENCH_OUTCOMES"] = str(outcomes_file)
    python = instance.get("python") or "python"
    argv = [python, "-m", "pytest", "-rA", "-p", "no:cacheprovider", "-p", "swebench_outcomes"]
    argv += ["--rootdir", os.getcwd(), "--continue-on-collection-errors", *test_ids]
    print("$", " ".join(argv[:8]), f"... {len(test_ids)} test ids", flush=True)
    try:
        return subprocess.run(argv, env=env, timeout=instance.get("timeout"), check=False).returncode
    except subprocess.TimeoutExpired:
        print(f"pytest took more than {instance.get('timeout')} s", flush=True)
        return -1


def main() -> int:
    instance = json.loads((HERE / "instance.json").read_text(encoding="utf-8"))
    original = Path(os.environ["EVAL_ORIGINAL_WORKSPACE"])
    patch_file = HERE / "test.patch"
    paths = touched_paths(patch_file.read_text(encoding="utf-8"))
    saved = snapshot(paths)
    restore({path: (original / path).read_bytes() if (original / path).is_file() else None for path in paths})
    try:
        applied = subprocess.run(["git", "apply", "--whitespace=nowarn", str(patch_file)], check=False)
        if applied.returncode != 0:
            print("FAILED: the test patch does not apply", flush=True)
            return 1
        fail_to_pass, pass_to_pass = instance["FAIL_TO_PASS"], instance["PASS_TO_PASS"]
        with tempfile.TemporaryDirectory() as tmp:
            outcomes_file = Path(tmp) / "outcomes.json"
            run_pytest(instance, list(dict.fromkeys(fail_to_pass + pass_to_pass)), outcomes_file)
            outcomes = json.loads(outcomes_file.read_text()) if outcomes_file.is_file() else {}
    finally:
        restore(saved)
    bad = [
        f"{kind} {test_id}: {outcomes.get(test_id, 'did not run')}"
        for kind, ids in (("FAIL_TO_PASS", fail_to_pass), ("PASS_TO_PASS", pass_to_pass))
        for test_id in ids
        if outcomes.get(test_id) not in GOOD
    ]
    total = len(fail_to_pass) + len(pass_to_pass)
    print(f"\n{instance['instance_id']}: {total - len(bad)}/{total} required tests pass")
    for line in bad:
        print(f"  {line}")
    print("RESOLVED" if not bad else "NOT RESOLVED", flush=True)
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
