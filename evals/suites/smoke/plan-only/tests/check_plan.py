"""A plan of at least three entries that mentions the cache, and no file in the workspace changed."""

import json
import os
import sys
from pathlib import Path

IGNORED = {".git", "__pycache__", ".pytest_cache"}


def snapshot(root: Path) -> dict[str, bytes]:
    files = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in IGNORED]
        for name in names:
            path = Path(folder, name)
            files[str(path.relative_to(root))] = path.read_bytes()
    return files


before, after = snapshot(Path(os.environ["EVAL_ORIGINAL_WORKSPACE"])), snapshot(Path("."))
changed = sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))
plan_file = Path(os.environ["EVAL_PLAN_FILE"])
plan = json.loads(plan_file.read_text()) if plan_file.is_file() else []
text = " ".join(str(entry.get("content", "")) for entry in plan).lower()
problems = []
if changed:
    problems.append(f"files changed in plan mode: {changed}")
if len(plan) < 3:
    problems.append(f"the plan has {len(plan)} entries; at least 3 expected")
if "cache" not in text or "update_user" not in text:
    problems.append(f"the plan does not cover the cache and update_user: {text!r}")
if problems:
    sys.exit("\n".join(problems))
print("plan ok")
