"""The agent's final answer names port 8473, and no file in the workspace changed."""

import os
import re
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
answer_file = Path(os.environ["EVAL_ANSWER_FILE"])
answer = answer_file.read_text() if answer_file.is_file() else ""
problems = []
if changed:
    problems.append(f"files changed: {changed}")
if not re.search(r"(?<!\d)8473(?!\d)", answer):
    problems.append(f"the answer does not name port 8473: {answer[-500:]!r}")
if problems:
    sys.exit("\n".join(problems))
print("answer ok")
