"""`session/new` reply time with a dead MCP server configured, next to no MCP server at all.

The agent must not wait for MCP servers in `session/new`: they connect in the background. Each figure is the
median over N `session/new` requests in one running agent (the first, which builds validators, is left out).

    python bench/mcp.py [--runs 30]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

DEAD = {"name": "ghost", "command": "/nonexistent/mcp-server", "args": [], "env": []}
HANGS = {"name": "hangs", "command": sys.executable, "args": ["-c", "import time; time.sleep(60)"], "env": []}


class Agent:
    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "coder_agent", "acp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.next_id = 0

    def call(self, method: str, params: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}) + "\n"
        start = time.perf_counter()
        self.proc.stdin.write(line.encode())
        self.proc.stdin.flush()
        while True:
            message = json.loads(self.proc.stdout.readline())
            if message.get("id") == self.next_id:
                return time.perf_counter() - start, message

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def measure(agent: Agent, cwd: str, servers: list[dict[str, Any]], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        seconds, reply = agent.call("session/new", {"cwd": cwd, "mcpServers": servers})
        assert "sessionId" in reply.get("result", {}), reply
        times.append(seconds)
    return times


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
        agent = Agent(env)
        agent.call("initialize", {"protocolVersion": 1})
        measure(agent, home, [], 1)  # warm up
        plain = measure(agent, home, [], args.runs)
        dead = measure(agent, home, [DEAD], args.runs)
        hangs = measure(agent, home, [HANGS], min(args.runs, 10))
        agent.close()
    for label, times in (("no MCP server", plain), ("one dead MCP server", dead), ("one hanging MCP server", hangs)):
        print(
            f"session/new, {label:24s} median {statistics.median(times) * 1000:6.1f} ms  "
            f"max {max(times) * 1000:6.1f} ms  (n={len(times)})"
        )
    print("target: one dead MCP server <= 50 ms")


if __name__ == "__main__":
    main()
