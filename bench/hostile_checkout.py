"""What reading a hostile checkout's files costs: each case of `tests/fixtures/hostile_checkout/` that the agent
reads on its own, in a fresh interpreter with its address space capped (1 GiB) and a 20 s deadline.

Prints, per case, how it ended (ok, MemoryError at the cap, still blocked at the deadline), the wall time and the
interpreter's peak RSS. `--code-from DIR` runs another checkout's `coder_agent` (e.g. an older commit's, exported
with `git archive d970ec5^ | tar -x -C DIR`) to show the same cases before a fix.

    python bench/hostile_checkout.py [--code-from DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CASES = REPO / "tests" / "fixtures" / "hostile_checkout" / "cases.toml"  # data, read; bench imports no tests
CAP = 1 << 30
DEADLINE = 20.0
PEAK = "print(json.dumps([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]))"
# Each read tries today's module first, then the one before the package moved into rooms (issue 22), so that
# `--code-from` an older checkout runs the same read.
PROMPT = (
    "try:\n    from coder_agent.prestart.project_facts import system_prompt_now\n"
    "except ImportError:\n    from coder_agent.agent.project_facts import system_prompt_now\n"
    "system_prompt_now(P, [])"
)
WALK = (
    "try:\n    from coder_agent.agent.workspace.ignore import walk\n"
    "except ImportError:\n    from coder_agent.agent.ignore import walk\n"
    "walk(P)"
)
COMMANDS = (
    "from coder_agent.agent.commands.files import command_files\n"
    "try:\n    command_files(None, P, [P])\nexcept TypeError:  # before issue 20 it took no roots\n"
    "    command_files(None, P)"
)
READS = {
    "instructions-zero": PROMPT,
    "instructions-fifo": PROMPT,
    "instructions-huge": PROMPT,
    "command-huge": COMMANDS,
    "gitignore-zero": WALK,
    "gitignore-fifo": WALK,
}


def lay_out(name: str, project: Path) -> None:
    """One project-side case of cases.toml made under `project`, by the kinds its header defines (the tests'
    builder, `tests/support/hostile_checkout.py`, also makes the fake HOME the cases here do not need)."""
    with CASES.open("rb") as handle:
        case = next(entry for entry in tomllib.load(handle)["case"] if entry["name"] == name)
    if case.get("where", "project") != "project":
        raise ValueError(f"{name}: only cases in the checkout are benched")
    path = project / case["path"]
    path.parent.mkdir(parents=True, exist_ok=True)
    if case["kind"] == "link":
        path.symlink_to(case["target"])
    elif case["kind"] == "fifo":
        os.mkfifo(path)
    elif case["kind"] == "huge":
        with path.open("wb") as handle:  # sparse: no disk is spent on the zeros
            handle.write(b"# A huge file\n")
            handle.truncate(case["size"])
    else:
        path.write_text(case.get("text", ""), encoding="utf-8")


def run(case: str, code_from: Path) -> str:
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder) / "project"
        (project / "sub").mkdir(parents=True)
        lay_out(case, project)
        code = (
            f"import json, resource, sys\nresource.setrlimit(resource.RLIMIT_AS, ({CAP}, {CAP}))\nP = sys.argv[1]\n"
            f"{READS[case]}\n{PEAK}"
        )
        started = time.monotonic()
        try:
            done = subprocess.run(
                [sys.executable, "-c", code, str(project)],
                capture_output=True,
                text=True,
                timeout=DEADLINE,
                env={**os.environ, "PYTHONPATH": str(code_from)},
                cwd=folder,  # not this checkout: `-c` puts the cwd first on sys.path
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return f"{case:20} still blocked after {DEADLINE:.0f} s"
        took = time.monotonic() - started
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["?"])[-1]
            return f"{case:20} failed after {took:5.2f} s: {last[:80]}"
        peak = int(json.loads(done.stdout.strip().splitlines()[-1])) / 1024
        return f"{case:20} ok in {took:5.2f} s, peak RSS {peak:5.1f} MiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--code-from", type=Path, default=REPO)
    args = parser.parse_args()
    print(f"coder_agent from {args.code_from}; address space capped at {CAP >> 20} MiB, deadline {DEADLINE:.0f} s")
    for case in READS:
        print(run(case, args.code_from))


if __name__ == "__main__":
    main()
