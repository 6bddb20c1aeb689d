"""Per-chunk cost of the early first call's transport (`llm/raw_http.py`, read on by `llm/adopted.py`) next to the
direct path's httpx, end to end: a 2,000-chunk reply from the scripted server through `DirectModel`, the early
call taken over after its first delta (as when the runtime comes in mid-reply). Medians of 5, same run.

    python bench/plain_transport.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the contract harness lives in tests/

from coder_agent.scripted.script import Reply
from tests.llm.contract import OPENAI, run

CHUNKS = 2000


async def main() -> None:
    paths: dict[str, int | bool] = {"httpx (direct path)": False, "plain socket (early call, taken over)": 1}
    results: dict[str, list[float]] = {name: [] for name in paths}
    for _ in range(5):
        for name, early in paths.items():
            start = time.perf_counter()
            outcome = await run("direct", OPENAI, [Reply.many_chunks(CHUNKS)], early=early)
            results[name].append((time.perf_counter() - start) / CHUNKS * 1e6)
            assert len(outcome.texts()) >= CHUNKS - 1
    for name, figures in results.items():
        print(f"{name:40s} {statistics.median(figures):6.1f} us per chunk (scripted server included)")


if __name__ == "__main__":
    anyio.run(main)
