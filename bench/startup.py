"""Start-up figures for `coder-agent acp`: spawn -> initialize reply, spawn -> session/new reply, and RSS.

Prints medians over N runs (default 15), next to `python -c pass` in the same run for scale. A plain
`session/new` is answered before the runtime is imported (`server/early_session.py`), so the bench also asks
`session/list` right after it: its reply comes once the full agent serves, and RSS is read from /proc then,
before any prompt; litellm must not be loaded then.

    python bench/startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from client import agent  # bench/client.py: the one client (the eval harness's launcher)


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


async def one_run(env: dict[str, str], cwd: str) -> tuple[float, float, float, float]:
    start = time.perf_counter()
    async with agent(env, Path(cwd)) as running:
        init = await running.connection.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        t_init = time.perf_counter() - start
        assert init["protocolVersion"] == 1, init
        new = await running.connection.request("session/new", {"cwd": cwd, "mcpServers": []})
        t_new = time.perf_counter() - start
        assert "sessionId" in new, new
        listed = await running.connection.request("session/list", {})
        t_list = time.perf_counter() - start
        assert new["sessionId"] in [info["sessionId"] for info in listed["sessions"]], listed
        rss = rss_mb(running.process.pid)
    return t_init, t_new, t_list, rss


def baseline(runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        env = dict(
            os.environ,
            CODER_AGENT_HOME=home,
            CODER_AGENT_MODEL="openai/bench",
            CODER_AGENT_API_BASE="http://127.0.0.1:9/v1",
        )
        anyio.run(one_run, env, home)  # warm the bytecode cache
        results = [anyio.run(one_run, env, home) for _ in range(args.runs)]
    python = baseline(args.runs)
    inits, news, lists, rsss = zip(*results, strict=True)
    print(f"runs: {args.runs} (medians; min-max in brackets)")
    print(f"python -c pass                  {python * 1000:7.1f} ms")
    print(
        f"spawn -> initialize reply       {statistics.median(inits) * 1000:7.1f} ms  "
        f"[{min(inits) * 1000:.1f}-{max(inits) * 1000:.1f}]  target <= 60 ms"
    )
    print(
        f"spawn -> session/new reply      {statistics.median(news) * 1000:7.1f} ms  "
        f"[{min(news) * 1000:.1f}-{max(news) * 1000:.1f}]"
    )
    print(
        f"spawn -> session/list reply     {statistics.median(lists) * 1000:7.1f} ms  "
        f"[{min(lists) * 1000:.1f}-{max(lists) * 1000:.1f}]  (the full agent serves)"
    )
    print(
        f"RSS after session/list          {statistics.median(rsss):7.1f} MB  "
        f"[{min(rsss):.1f}-{max(rsss):.1f}]  target <= 60 MB"
    )
    print(f"initialize / python startup     {statistics.median(inits) / python:7.2f} x")


if __name__ == "__main__":
    main()
