"""Every popular model answers at once: spawn -> first chunk with the prompt sent at once, per wire, next to the floor.

One run, one scripted model server (its own process) speaking each wire: for each model, a fresh `coder-agent acp`
(fresh data folder) gets `initialize`, `session/new` and, right after its reply, the prompt; the figures are from
the spawn: the first `agent_thought_chunk` or `agent_message_chunk`, the last chunk, and the prompt's reply
(`end_turn`). The floor is bench/floor_agent.py (a stdlib agent that does the least), on the same server in the
same run. Also: `session/new` with an MCP server named in it (one that never answers: only the `session/new`
answer is timed) next to one without, and a slash command as the first prompt next to a plain one (the model
`openai/bench`).

    python bench/wires.py [--runs 5] [--pythonpath DIR]   # DIR: another checkout's agent instead of this one
    python bench/wires.py --before DIR                    # this checkout and DIR's, round by round, one table each
"""

from __future__ import annotations

import argparse
import json
import math
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
# (label, model, extra environment): the thinking model thinks from the first prompt (its reply thinks, then
# answers); `openai/gpt-5-mini` speaks OpenAI's Responses API.
MODELS: list[tuple[str, str, dict[str, str]]] = [
    ("anthropic, thinking", "anthropic/claude-sonnet-4-5", {"CODER_AGENT_THOUGHT_LEVEL": "high"}),
    ("openrouter", "openrouter/anthropic/claude-sonnet-4.5", {}),
    ("ollama", "ollama/qwen2.5-coder", {}),
    ("deepseek", "deepseek/deepseek-chat", {}),
    ("gemini", "gemini/gemini-2.5-flash", {}),
    ("openai/gpt-5, Responses", "openai/gpt-5-mini", {}),
]
HANGS = {"name": "hangs", "command": sys.executable, "args": ["-c", "import time; time.sleep(60)"], "env": []}


class Agent:
    def __init__(self, command: list[str], env: dict[str, str], cwd: str) -> None:
        self.start = time.perf_counter()
        pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.DEVNULL}
        # In `cwd`, not here: `python -m` puts its folder first on the path, before PYTHONPATH's checkout.
        self.proc = subprocess.Popen(command, env=env, cwd=cwd, **pipes)  # type: ignore[call-overload]
        self.next_id = 0

    def send(self, method: str, params: dict[str, Any]) -> int:
        assert self.proc.stdin is not None
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}) + "\n"
        self.proc.stdin.write(line.encode())
        self.proc.stdin.flush()
        return self.next_id

    def read(self) -> tuple[float, dict[str, Any]]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the agent closed its output")
        message = json.loads(line)
        if "error" in message:
            raise RuntimeError(f"the agent answered an error: {message}")
        return time.perf_counter() - self.start, message

    def call(self, method: str, params: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        request_id = self.send(method, params)
        while True:
            seconds, message = self.read()
            if message.get("id") == request_id:
                return seconds, message

    def prompt(self, session_id: str, text: str) -> dict[str, float]:
        """Times since spawn: the first chunk (a thought or text), the last chunk, the reply."""
        request_id = self.send("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]})
        first = last = None
        while True:
            seconds, message = self.read()
            if message.get("id") == request_id:
                assert first is not None and last is not None, "no chunk came"
                return {"first chunk": first, "last chunk": last, "end_turn": seconds}
            update = (message.get("params") or {}).get("update") or {}
            if update.get("sessionUpdate") in ("agent_message_chunk", "agent_thought_chunk"):
                first = seconds if first is None else first
                last = seconds

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def one_run(command: list[str], env: dict[str, str], cwd: str, text: str = "hi", mcp: bool = False) -> dict[str, float]:
    agent = Agent(command, env, cwd)
    try:
        t_init, _ = agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        t_new, reply = agent.call("session/new", {"cwd": cwd, "mcpServers": [HANGS] if mcp else []})
        if mcp:  # the prompt would wait for that server's tools (it never answers): the answer is the figure
            nan = math.nan
            return {"initialize": t_init, "session/new": t_new, "first chunk": nan, "last chunk": nan, "end_turn": nan}
        figures = agent.prompt(reply["result"]["sessionId"], text)
        return {"initialize": t_init, "session/new": t_new, **figures}
    finally:
        agent.close()


def median(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(run[key] for run in runs)


def script() -> Script:
    # Thinking, then text, on every wire: the thinking model shows both; the others show the text (a Chat
    # Completions reply's reasoning shows as thoughts too, which is what they would stream first).
    return Script(default=Reply.thinking_then_text(["Let me ", "think."], ["Hello", " there", "."]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--pythonpath", default="", help="run the agent of another checkout")
    parser.add_argument("--before", default="", help="also run another checkout's agent, in the same rounds")
    args = parser.parse_args()
    checkouts = {"": args.pythonpath} if not args.before else {"": args.pythonpath, " (before)": args.before}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "script.json"
        script().save(path)
        server = subprocess.Popen(
            [sys.executable, "-m", "coder_agent.scripted", "--script", str(path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert server.stdout is not None
            url = server.stdout.readline().strip()
            agent_cmd = [sys.executable, "-m", "coder_agent", "acp"]
            results: dict[str, list[dict[str, float]]] = {}
            failed: dict[str, str] = {}
            for i, (suffix, pythonpath) in (
                (i, checkout) for i in range(args.runs + 1) for checkout in checkouts.items()
            ):  # the first round warms the bytecode caches and is dropped
                base = dict(os.environ, CODER_AGENT_API_KEY="sk-bench")
                if pythonpath:
                    base["PYTHONPATH"] = pythonpath
                rounds: dict[str, dict[str, float]] = {}
                for label, model, extra in MODELS:
                    api_base = url.removesuffix("/v1") if model.startswith("anthropic/") else url
                    env = dict(base, CODER_AGENT_API_BASE=api_base, CODER_AGENT_MODEL=model, **extra)
                    env["CODER_AGENT_HOME"] = f"{tmp}/home-{i}-{label}{suffix}"
                    try:
                        rounds[label] = one_run(agent_cmd, env, tmp)
                    except RuntimeError as exc:  # another checkout may not speak a wire (Ollama's /v1 before)
                        failed[label + suffix] = str(exc)[:100]
                plain = dict(base, CODER_AGENT_API_BASE=url, CODER_AGENT_MODEL="openai/bench")
                home = f"{tmp}/{i}{suffix}"
                rounds["openai/bench, plain"] = one_run(agent_cmd, dict(plain, CODER_AGENT_HOME=f"{home}p"), tmp)
                rounds["an MCP server in session/new"] = one_run(
                    agent_cmd, dict(plain, CODER_AGENT_HOME=f"{home}m"), tmp, mcp=True
                )
                rounds["slash command /init"] = one_run(
                    agent_cmd, dict(plain, CODER_AGENT_HOME=f"{home}s"), tmp, text="/init"
                )
                floor = one_run([sys.executable, str(FLOOR)], dict(os.environ, CODER_AGENT_API_BASE=url), tmp)
                if i:
                    for name, figures in rounds.items():
                        results.setdefault(name + suffix, []).append(figures)
                    results.setdefault("floor", []).append(floor)
        finally:
            server.terminate()
            server.wait()
    ms = 1000.0
    floor = median(results["floor"], "first chunk")
    where = " ".join(filter(None, [args.pythonpath, args.before and f"before: {args.before}"]))
    print(f"runs: {args.runs} (medians, ms from spawn); load average {os.getloadavg()[0]:.1f} {where}")
    print(f"{'':34} {'init':>5} {'new':>5} {'first':>6} {'/floor':>7} {'last':>6} {'end':>6} {'end-last':>9}")
    for name, runs in results.items():
        first, last, end = (median(runs, key) for key in ("first chunk", "last chunk", "end_turn"))
        print(
            f"{name:34} {median(runs, 'initialize') * ms:5.0f} {median(runs, 'session/new') * ms:5.0f} "
            f"{first * ms:6.0f} {first / floor:6.2f}x "
            f"{last * ms:6.0f} {end * ms:6.0f} {(end - last) * ms:9.0f}"
        )
    for name, why in failed.items():
        print(f"{name:34} failed: {why}")


if __name__ == "__main__":
    main()
