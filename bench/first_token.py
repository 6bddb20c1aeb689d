"""How soon the first answer streams: spawn -> first `agent_message_chunk` of the first prompt, and more.

The agent (`coder-agent acp`) talks to the scripted model server (its own process, OpenAI-compatible, no
key checks); each run spawns a fresh agent with a fresh data folder and measures, from the spawn:
initialize reply, session/new reply and the first agent_message_chunk of a prompt sent right after the
session/new reply (`immediate`), or 2 s later (`after 2 s`, prompt -> first chunk), then a second prompt
-> first chunk. The floor is bench/floor_agent.py: a stdlib-only agent doing the least there is, on the
same server in the same run.

    python bench/first_token.py [--runs 7] [--model openai/bench]
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
from pathlib import Path
from typing import Any

from coder_agent.scripted.script import Reply, Script

FLOOR = Path(__file__).with_name("floor_agent.py")


class Agent:
    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.start = time.perf_counter()
        pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.DEVNULL}
        self.proc = subprocess.Popen(command, env=env, **pipes)  # type: ignore[call-overload]
        self.next_id = 0

    def send(self, method: str, params: dict[str, Any]) -> int:
        assert self.proc.stdin is not None
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}) + "\n"
        self.proc.stdin.write(line.encode())
        self.proc.stdin.flush()
        return self.next_id

    def until(self, done: Any) -> float:
        """Read messages until `done(message)`; the time since spawn."""
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the agent closed its output")
            message = json.loads(line)
            if "error" in message:
                raise RuntimeError(f"the agent answered an error: {message}")
            if done(message):
                return time.perf_counter() - self.start

    def call(self, method: str, params: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        request_id = self.send(method, params)
        replies: list[dict[str, Any]] = []
        seconds = self.until(lambda m: m.get("id") == request_id and not replies.append(m))
        return seconds, replies[0]

    def prompt(self, session_id: str, text: str) -> tuple[float, float]:
        """(time of the first agent_message_chunk since spawn, time of the reply since spawn)."""
        request_id = self.send("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]})
        first = self.until(_is_chunk)
        end = self.until(lambda m: m.get("id") == request_id)
        return first, end

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def _is_chunk(message: dict[str, Any]) -> bool:
    update = (message.get("params") or {}).get("update") or {}
    return message.get("method") == "session/update" and update.get("sessionUpdate") == "agent_message_chunk"


def one_run(command: list[str], env: dict[str, str], cwd: str, wait: float) -> dict[str, float]:
    agent = Agent(command, env)
    try:
        t_init, _ = agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        t_new, reply = agent.call("session/new", {"cwd": cwd, "mcpServers": []})
        session_id = reply["result"]["sessionId"]
        if wait:
            time.sleep(wait)
        sent = time.perf_counter() - agent.start
        first, _ = agent.prompt(session_id, "hi")
        sent2 = time.perf_counter() - agent.start
        second, _ = agent.prompt(session_id, "again")
        return {
            "initialize": t_init,
            "session/new": t_new,
            "first chunk": first,
            "prompt -> first chunk": first - sent,
            "second prompt -> first chunk": second - sent2,
        }
    finally:
        agent.close()


def median(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(run[key] for run in runs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--model", default="openai/bench")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "script.json"
        Script(default=Reply.text("Hello", " there", ".")).save(script)
        server = subprocess.Popen(
            [sys.executable, "-m", "coder_agent.scripted", "--script", str(script)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert server.stdout is not None
            api_base = server.stdout.readline().strip()
            if args.model.startswith("anthropic/"):
                api_base = api_base.removesuffix("/v1")
            base_env = dict(os.environ, CODER_AGENT_API_BASE=api_base, CODER_AGENT_API_KEY="sk-bench")
            agent_cmd = [sys.executable, "-m", "coder_agent", "acp"]
            floor_cmd = [sys.executable, str(FLOOR)]
            results: dict[str, list[dict[str, float]]] = {"agent": [], "agent, prompt after 2 s": [], "floor": []}
            for i in range(args.runs + 1):  # the first round warms the bytecode caches and is dropped
                home = Path(tmp) / f"home{i}"
                env = dict(base_env, CODER_AGENT_HOME=str(home), CODER_AGENT_MODEL=args.model)
                rounds = {
                    "agent": one_run(agent_cmd, env, tmp, 0.0),
                    "agent, prompt after 2 s": one_run(agent_cmd, dict(env, CODER_AGENT_HOME=f"{home}b"), tmp, 2.0),
                    "floor": one_run(floor_cmd, base_env, tmp, 0.0),
                }
                if i:
                    for name, figures in rounds.items():
                        results[name].append(figures)
        finally:
            server.terminate()
            server.wait()
    agent, later, floor = results["agent"], results["agent, prompt after 2 s"], results["floor"]
    ms = 1000.0
    print(f"model {args.model}, runs: {args.runs} (medians, ms)")
    print(f"spawn -> initialize reply                 {median(agent, 'initialize') * ms:7.0f}")
    print(f"spawn -> session/new reply                {median(agent, 'session/new') * ms:7.0f}  (lead's target <= 250)")
    first, floor_first = median(agent, "first chunk"), median(floor, "first chunk")
    print(f"spawn -> first chunk, prompt at once      {first * ms:7.0f}  target <= 800")
    print(f"floor (stdlib agent): spawn -> first chunk{floor_first * ms:7.0f}")
    print(f"agent / floor                             {first / floor_first:7.2f} x  target <= 2.5")
    later_first = median(later, "prompt -> first chunk")
    print(f"prompt 2 s after session/new -> chunk     {later_first * ms:7.0f}  target <= 200")
    print(f"second prompt -> first chunk              {median(agent, 'second prompt -> first chunk') * ms:7.0f}")
    print(f"second prompt, 2 s case                   {median(later, 'second prompt -> first chunk') * ms:7.0f}")


if __name__ == "__main__":
    main()
