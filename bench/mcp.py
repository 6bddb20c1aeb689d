"""`session/new` reply time with a dead MCP server configured, next to no MCP server at all.

The agent must not wait for MCP servers in `session/new`: they connect in the background. Each figure is the
median over N `session/new` requests in one running agent (the first, which builds validators, is left out).

    python bench/mcp.py [--runs 30]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
from client import agent, timed_request  # bench/client.py: the one client (the eval harness's launcher)

from evals.harness.agent_process import AgentProcess

DEAD = {"name": "ghost", "command": "/nonexistent/mcp-server", "args": [], "env": []}
HANGS = {"name": "hangs", "command": sys.executable, "args": ["-c", "import time; time.sleep(60)"], "env": []}


async def measure(running: AgentProcess, cwd: str, servers: list[dict[str, Any]], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        seconds, reply = await timed_request(running, "session/new", {"cwd": cwd, "mcpServers": servers})
        assert "sessionId" in reply, reply
        times.append(seconds)
    return times


async def run(env: dict[str, str], home: str, runs: int) -> tuple[list[float], list[float], list[float]]:
    async with agent(env, Path(home)) as running:
        await running.connection.request("initialize", {"protocolVersion": 1})
        await measure(running, home, [], 1)  # warm up
        plain = await measure(running, home, [], runs)
        dead = await measure(running, home, [DEAD], runs)
        hangs = await measure(running, home, [HANGS], min(runs, 10))
    return plain, dead, hangs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        env = dict(
            os.environ,
            CODER_AGENT_HOME=home,
            CODER_AGENT_MODEL=os.environ.get("BENCH_MODEL", "openai/bench"),
            CODER_AGENT_API_BASE="http://127.0.0.1:9/v1",
            CODER_AGENT_MCP_TIMEOUT="5",
        )
        plain, dead, hangs = anyio.run(run, env, home, args.runs)
    for label, times in (("no MCP server", plain), ("one dead MCP server", dead), ("one hanging MCP server", hangs)):
        print(
            f"session/new, {label:24s} median {statistics.median(times) * 1000:6.1f} ms  "
            f"max {max(times) * 1000:6.1f} ms  (n={len(times)})"
        )
    print("target: one dead MCP server <= 50 ms")


if __name__ == "__main__":
    main()
