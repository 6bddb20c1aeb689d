"""stdin closed -> the process gone, at each stage of `coder-agent acp`'s life (the official TCK's ACP-SHUTDOWN-001).

Stages: before `initialize`; after it; right after the early `session/new` (the runtime still importing); while
the early first call streams (a reply that stalls after its first words); during a turn of the full agent (the
same stall); right after a `session/new` naming an MCP server (the SDK still loading); with an MCP server that
ignores both its stdin's end and SIGTERM. Each figure is EOF -> exit as the client sees it (`wait` returns),
median and max over N fresh agents; "before initialize" includes the interpreter's start (`python -c pass`
is printed for scale).

    python bench/shutdown.py [--runs 15] [--source DIR]   # DIR: another checkout's agent (the figures before)
"""

from __future__ import annotations

import argparse
import json
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coder_agent.scripted.script import Reply, Script
from coder_agent.scripted.server import ScriptedModelServer

DEAF = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(60)\n"
STAGES = ("before initialize", "after initialize", "early session/new", "early first call", "full agent's turn")
STAGES += ("MCP SDK loading", "MCP server deaf")


class Agent:
    def __init__(self, source: Path, env: dict[str, str], cwd: str) -> None:
        env = dict(env, PYTHONPATH=str(source))
        pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.DEVNULL}
        self.proc = subprocess.Popen([sys.executable, "-m", "coder_agent", "acp"], env=env, cwd=cwd, **pipes)  # type: ignore[call-overload]
        self.buffer = b""

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        self.proc.stdin.flush()

    def read(self, timeout: float = 60.0) -> dict[str, Any]:
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            if not select.select([self.proc.stdout], [], [], max(0.0, deadline - time.monotonic()))[0]:
                raise TimeoutError("the agent did not answer")
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                raise EOFError("the agent closed its stdout")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        message: dict[str, Any] = json.loads(line)
        return message

    def until(self, test: Any) -> dict[str, Any]:
        while not test(message := self.read()):
            pass
        return message

    def close_stdin(self) -> float:
        """EOF -> exit, in seconds."""
        assert self.proc.stdin is not None
        started = time.perf_counter()
        self.proc.stdin.close()
        self.proc.wait(60)
        return time.perf_counter() - started


def chunk(message: dict[str, Any]) -> bool:
    return message.get("params", {}).get("update", {}).get("sessionUpdate") == "agent_message_chunk"


def one(stage: str, source: Path, srv: ScriptedModelServer, env: dict[str, str], cwd: str) -> float:
    agent = Agent(source, env, cwd)
    if stage == "before initialize":
        return agent.close_stdin()
    agent.send({"id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
    agent.read()
    servers: list[dict[str, Any]] = []
    if stage.startswith("MCP"):
        args = ["-c", DEAF] if stage == "MCP server deaf" else ["-c", "import time; time.sleep(60)"]
        servers = [{"name": "slow", "command": sys.executable, "args": args, "env": []}]
    if stage != "after initialize":
        agent.send({"id": 1, "method": "session/new", "params": {"cwd": cwd, "mcpServers": servers}})
        session = agent.until(lambda m: m.get("id") == 1)["result"]["sessionId"]
    if stage in ("full agent's turn", "MCP server deaf"):
        agent.send({"id": 2, "method": "session/list", "params": {}})  # answered: the full agent serves
        agent.until(lambda m: m.get("id") == 2)
        if stage == "MCP server deaf":
            time.sleep(2)  # the SDK loaded and the server started (a benchmark may wait: nothing to wait on)
    if stage in ("early first call", "full agent's turn"):
        srv.enqueue(Reply.stall(30, after_text=["Partial "]))
        prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}
        agent.send({"id": 3, "method": "session/prompt", "params": prompt})
        agent.until(chunk)
    return agent.close_stdin()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--source", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args()
    figures: dict[str, list[float]] = {stage: [] for stage in STAGES}
    with ScriptedModelServer(Script(replies=[])) as srv, tempfile.TemporaryDirectory() as tmp:
        cwd = os.path.join(tmp, "workspace")
        os.mkdir(cwd)
        for run in range(args.runs + 1):  # the first round warms the bytecode caches and is dropped
            for stage in STAGES:
                home = os.path.join(tmp, f"home-{run}-{STAGES.index(stage)}")
                env = dict(os.environ, CODER_AGENT_HOME=home, CODER_AGENT_MODEL="openai/scripted")
                env.update(CODER_AGENT_API_BASE=srv.url, CODER_AGENT_API_KEY="sk-bench", XDG_CONFIG_HOME=home + "/c")
                seconds = one(stage, args.source, srv, env, cwd)
                if run:
                    figures[stage].append(seconds)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    python = time.perf_counter() - started
    print(f"agent: {args.source}, runs: {args.runs} (EOF -> exit, median / max, ms)")
    print(f"{'python -c pass':32} {python * 1000:6.0f}")
    for stage, times in figures.items():
        print(f"{stage:32} {statistics.median(times) * 1000:6.0f} / {max(times) * 1000:.0f}   target < 500")


if __name__ == "__main__":
    main()
