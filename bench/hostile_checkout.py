"""What reading a hostile checkout's files costs: each case of `tests/fixtures/hostile_checkout/` that the agent
reads on its own, in a fresh interpreter with its address space capped (1 GiB) and a 20 s deadline.

Prints, per case, how it ended (ok, MemoryError at the cap, still blocked at the deadline), the wall time and the
interpreter's peak RSS. `--code-from DIR` runs another checkout's `coder_agent` (e.g. main's, exported with
`git archive main | tar -x -C DIR`) to show the same cases before the fix.

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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.hostile_checkout import lay_out

CAP = 1 << 30
DEADLINE = 20.0
PEAK = "print(json.dumps([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]))"
READS = {
    "instructions-zero": "from coder_agent.agent.project_facts import system_prompt_now\nsystem_prompt_now(P, [])",
    "instructions-fifo": "from coder_agent.agent.project_facts import system_prompt_now\nsystem_prompt_now(P, [])",
    "instructions-huge": "from coder_agent.agent.project_facts import system_prompt_now\nsystem_prompt_now(P, [])",
    "command-huge": "from coder_agent.agent.commands.files import command_files\n"
    "try:\n    command_files(None, P, [P])\nexcept TypeError:  # main's takes no roots\n    command_files(None, P)",
    "gitignore-zero": "from coder_agent.agent.ignore import walk\nwalk(P)",
    "gitignore-fifo": "from coder_agent.agent.ignore import walk\nwalk(P)",
}


def run(case: str, code_from: Path) -> str:
    with tempfile.TemporaryDirectory() as folder:
        checkout = lay_out([case], Path(folder) / "project", Path(folder) / "home")
        (checkout.project / "sub").mkdir(exist_ok=True)
        code = (
            f"import json, resource, sys\nresource.setrlimit(resource.RLIMIT_AS, ({CAP}, {CAP}))\nP = sys.argv[1]\n"
            f"{READS[case]}\n{PEAK}"
        )
        env = {**os.environ, "PYTHONPATH": str(code_from)}
        started = time.monotonic()
        try:
            done = subprocess.run(
                [sys.executable, "-c", code, str(checkout.project)],
                capture_output=True,
                text=True,
                timeout=DEADLINE,
                env=env,
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
    parser.add_argument("--code-from", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args()
    print(f"coder_agent from {args.code_from}; address space capped at {CAP >> 20} MiB, deadline {DEADLINE:.0f} s")
    for case in READS:
        print(run(case, args.code_from))


if __name__ == "__main__":
    main()
