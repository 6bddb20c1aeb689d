"""What diagnostics after an edit cost, with the default Python server (basedpyright): its start-up, its first check
(cold), and how long an edit's result waits for its check once the server runs, on a 300-line file.

Each edit alternates between adding a type error and taking it out, through the session's language servers as
the edit tools use them (`SessionServers.after_edits`, the default 3 s wait). Figures are medians (and the worst)
over N runs; the first check includes the server's start.

    python bench/diagnostics.py [--runs 20]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import anyio

from coder_agent.agent.diagnostics import Edit
from coder_agent.lsp.launch import launch
from coder_agent.lsp.probe import probe
from coder_agent.lsp.session import SessionServers
from coder_agent.lsp.specs import DEFAULTS, configured

WAIT = 3.0


def module(lines: int) -> str:
    """A plausible module: small typed functions calling each other."""
    parts = ["from __future__ import annotations\n\n"]
    for index in range(lines // 6):
        parts.append(f"def step_{index}(value: int) -> int:\n    total = value + {index}\n    return total * 2\n\n\n")
    return "".join(parts)


async def start_up(folder: Path, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        took, why = await probe(launch(DEFAULTS["python"], str(folder), [str(folder)]))
        assert took is not None, why
        times.append(took)
    return times


async def edits(folder: Path, runs: int) -> tuple[float, list[float]]:
    path = folder / "module.py"
    clean = module(300)
    broken = clean + "\n\nwrong: str = step_1(2)\n"
    path.write_text(clean)
    specs, _ = configured({})
    async with anyio.create_task_group() as tasks:
        servers = SessionServers(specs, lambda: [str(folder)], tasks, WAIT)
        started = time.monotonic()
        [first] = await servers.after_edits([Edit(str(path), clean, broken)], 60)
        cold = time.monotonic() - started
        assert first.new and not first.late, first
        old, times = broken, []
        for run in range(runs):
            new = clean if run % 2 == 0 else broken
            started = time.monotonic()
            [report] = await servers.after_edits([Edit(str(path), old, new)], WAIT)
            times.append(time.monotonic() - started)
            assert not report.late and (bool(report.new) == (new == broken)), report
            old = new
        await servers.close()
    return cold, times


async def main(runs: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        starts = await start_up(Path(folder), min(runs, 5))
        cold, warm = await edits(Path(folder), runs)
    print(f"basedpyright start-up (spawn -> initialize answered): median {statistics.median(starts):.2f} s")
    print(f"first check of an edit, server start included (cold):  {cold:.2f} s")
    print(
        f"an edit's wait for its check, server running (300-line file, {runs} edits): "
        f"median {statistics.median(warm) * 1000:.0f} ms, worst {max(warm) * 1000:.0f} ms (bound {WAIT:g} s)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    anyio.run(main, parser.parse_args().runs)
