"""The TTL is 900 and beta_search is on; every other line of both files is as it was."""

import difflib
import json
import os
import sys
import tomllib
from pathlib import Path

original = Path(os.environ["EVAL_ORIGINAL_WORKSPACE"], "config")
problems = []

toml_text = Path("config/app.toml").read_text()
try:
    app = tomllib.loads(toml_text)
except tomllib.TOMLDecodeError as exc:
    sys.exit(f"app.toml does not parse: {exc}")
if app.get("cache", {}).get("ttl_seconds") != 900:
    problems.append(f"cache.ttl_seconds is {app.get('cache', {}).get('ttl_seconds')!r}, not 900")

try:
    features = json.loads(Path("config/features.json").read_text())
except ValueError as exc:
    sys.exit(f"features.json does not parse: {exc}")
expected = dict(json.loads((original / "features.json").read_text()), beta_search=True)
if features != expected:
    problems.append(f"features.json is {features}, expected {expected}")

for name, text in (("app.toml", toml_text), ("features.json", Path("config/features.json").read_text())):
    before = (original / name).read_text().splitlines()
    changed = [
        line
        for line in difflib.unified_diff(before, text.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    if len(changed) != 2:
        problems.append(f"{name}: expected one line changed, the diff is {changed}")

if problems:
    sys.exit("\n".join(problems))
print("config ok")
