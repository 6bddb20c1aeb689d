"""The smoke suite's offline scripts: `golden.json` (solves the task through the agent's real tools) and
`null.json` (does not) for every task. This file is their source; the JSON files are its output.

    python -m evals.suites.smoke.build_scripts           # rewrite them
    python -m evals.suites.smoke.build_scripts --check   # exit 1 if any is out of date (tests run this)

The plan-only golden first tries a write: plan mode must refuse it, or the verifier sees the change.
"""

from __future__ import annotations

import sys
from pathlib import Path

from coder_agent.scripted.script import Script
from evals.harness.scripting import answer_only, call, golden

HERE = Path(__file__).resolve().parent
NOT_DONE = "I looked at the project, but I could not work out how to do this, so I changed nothing."

TEXTSTATS = '''"""Statistics about plain text (see spec.md)."""

from __future__ import annotations

import math
from collections import Counter

_STRIP = ".,;:!?\\"'()"


def word_count(text: str) -> int:
    return len(text.split())


def top_words(text: str, n: int) -> list[tuple[str, int]]:
    words = [word.lower().strip(_STRIP) for word in text.split()]
    counts = Counter(word for word in words if word)
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:n]


def reading_time(text: str, wpm: int = 200) -> int:
    return math.ceil(word_count(text) / wpm)
'''

DELETE_LEGACY = "\n".join(
    [
        "--- a/app/legacy_export.py",
        "+++ /dev/null",
        "@@ -1,9 +0,0 @@",
        *(f"-{line}" for line in (HERE / "delete-file/workspace/app/legacy_export.py").read_text().splitlines()),
        "",
    ]
)

PLAN = [
    {
        "content": "Add a module-level cache dict and a TTL constant to service.py",
        "priority": "high",
        "status": "pending",
    },
    {
        "content": "fetch_user: return a fresh cached entry, else query and cache it",
        "priority": "high",
        "status": "pending",
    },
    {"content": "update_user: invalidate the user's cache entry", "priority": "medium", "status": "pending"},
    {"content": "Test cache hits, expiry and invalidation", "priority": "medium", "status": "pending"},
]


def goldens() -> dict[str, Script]:
    return {
        "new-module": golden(
            call("list_dir"),
            call("read_file", path="spec.md"),
            call("write_file", path="textstats.py", content=TEXTSTATS),
            call("run_command", command="python -c 'import textstats; print(textstats.top_words(\"b a b\", 2))'"),
            final="I wrote `textstats.py` with `word_count`, `top_words` and `reading_time` as `spec.md` describes.",
        ),
        "off-by-one": golden(
            [call("read_file", path="pager.py"), call("read_file", path="tests/test_pager.py")],
            call(
                "edit_file", path="pager.py", old_string="start = page * size", new_string="start = (page - 1) * size"
            ),
            call("run_command", command="python -m pytest -q"),
            final="Pages are 1-based, so page `n` starts at `(n - 1) * size`; the test passes now.",
        ),
        "rename-function": golden(
            call("grep", pattern=r"\bcalc_total\b"),
            [
                call(
                    "edit_file",
                    path="shop/pricing.py",
                    old_string="def calc_total(",
                    new_string="def compute_order_total(",
                ),
                call(
                    "edit_file",
                    path="shop/cart.py",
                    old_string="calc_total",
                    new_string="compute_order_total",
                    replace_all=True,
                ),
                call(
                    "edit_file",
                    path="shop/report.py",
                    old_string="pricing.calc_total(order)",
                    new_string="pricing.compute_order_total(order)",
                ),
            ],
            call("grep", pattern=r"\bcalc_total\b"),
            final="Renamed `calc_total` to `compute_order_total` in pricing.py, cart.py and report.py.",
        ),
        "config-edit": golden(
            [call("read_file", path="config/app.toml"), call("read_file", path="config/features.json")],
            [
                call(
                    "edit_file", path="config/app.toml", old_string="ttl_seconds = 300", new_string="ttl_seconds = 900"
                ),
                call(
                    "edit_file",
                    path="config/features.json",
                    old_string='"beta_search": false',
                    new_string='"beta_search": true',
                ),
            ],
            final="The cache TTL is now 900 seconds (15 minutes) and `beta_search` is on.",
        ),
        "large-file-edit": golden(
            call("grep", pattern="def tariff_0200", path="tariffs.py"),
            call("read_file", path="tariffs.py", offset=998, limit=8),
            call(
                "edit_file",
                path="tariffs.py",
                old_string="    return round(amount * 1.2000, 4)",
                new_string="    return round(amount * 1.0200, 4)",
            ),
            final="`tariff_0200` now multiplies by 1.0200, like the rest of the table.",
        ),
        "terminal-generate": golden(
            call("read_file", path="scripts/summarize.py"),
            call("run_command", command="python scripts/summarize.py"),
            call("read_file", path="report/summary.json"),
            final="I ran `python scripts/summarize.py`; it wrote `report/summary.json`.",
        ),
        "question-no-edit": golden(
            call("grep", pattern="(?i)port", path="app"),
            call("read_file", path="app/settings.py"),
            final="By default the app listens on port 8473: BASE_PORT 8000 plus 473, the offset of the default slot.",
        ),
        "patch-multi-file": golden(
            [call("read_file", path="greeting/core.py"), call("read_file", path="greeting/cli.py")],
            call("apply_patch", patch=(HERE / "patch-multi-file/solution/solution.patch").read_text()),
            call("run_command", command="python -m greeting.cli Bob --calm"),
            final="`greet()` takes `excited` now, and `--calm` passes `excited=False`.",
        ),
        "delete-file": golden(
            call("read_file", path="app/main.py"),
            call("apply_patch", patch=DELETE_LEGACY),
            [
                call(
                    "edit_file",
                    path="app/main.py",
                    old_string="import json\n\nfrom app.legacy_export import export_legacy\n",
                    new_string="import json\n",
                ),
                call("edit_file", path="app/main.py", old_string="    export_legacy(RECORDS)\n", new_string=""),
            ],
            call("run_command", command="python -m app.main"),
            final="Deleted `app/legacy_export.py` and removed its import and call from `app/main.py`.",
        ),
        "traceback-fix": golden(
            call("run_command", command="python -m pytest -q"),
            call("read_file", path="inventory.py"),
            call(
                "edit_file",
                path="inventory.py",
                old_string="self.items[name] += quantity",
                new_string="self.items[name] = self.items.get(name, 0) + quantity",
            ),
            call("run_command", command="python -m pytest -q"),
            final="`restock` raised KeyError for a new item; it now starts from 0. The tests pass.",
        ),
        "crlf-edit": golden(
            call("read_file", path="deploy/settings.ini"),
            [
                call("edit_file", path="deploy/settings.ini", old_string="replicas = 2", new_string="replicas = 4"),
                call("edit_file", path="deploy/settings.ini", old_string="level = info", new_string="level = debug"),
            ],
            final="Set replicas to 4 and the logging level to debug; the file keeps its CRLF line endings.",
        ),
        "plan-only": golden(
            call("read_file", path="service.py"),
            call("write_file", path="service.py", content="# caching goes here\n"),
            call("todo_write", entries=PLAN),
            final="Plan mode is read-only, so here is the plan instead of the change.",
        ),
    }


def nulls() -> dict[str, Script]:
    scripts = {task: answer_only(NOT_DONE) for task in goldens()}
    scripts["question-no-edit"] = answer_only("I could not find which port the app uses.")
    return scripts


def build(check: bool) -> list[Path]:
    """Write (or, with check, compare) every script; returns the files that were out of date."""
    stale = []
    for kind, scripts in (("golden", goldens()), ("null", nulls())):
        for task, script in scripts.items():
            path = HERE / task / f"{kind}.json"
            text = script.model_dump_json(indent=2) + "\n"
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(path)
                if not check:
                    path.write_text(text, encoding="utf-8")
    return stale


if __name__ == "__main__":
    checking = "--check" in sys.argv[1:]
    out_of_date = build(checking)
    for path in out_of_date:
        print(f"{'out of date' if checking else 'wrote'}: {path.relative_to(HERE)}")
    sys.exit(1 if checking and out_of_date else 0)
