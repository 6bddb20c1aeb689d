"""A day of work in one session: 500 scripted turns through the real `coder-agent acp`, in a small window.

Each turn is a prompt `TASK n: ...`, a `read_file` call of a ~2 KB file, and a short answer: two model calls.
The scripted model (`coder_agent.scripted.worker`) answers them, writes the summaries when the agent
compacts, checks that no request lost the task or split a tool call from its answer, and the scripted
server refuses any request over the window, as a provider does. The agent is driven over raw pipes as an
editor drives it, with `CODER_AGENT_CONTEXT_WINDOW` set small so that compaction happens often.

Prints: the wall time of the whole session and per turn, how many compactions there were (and every how
many turns), the context in use before and after them, and compaction's cost in model tokens (the summary
requests' prompt and completion tokens, next to all the turns' own). Token counts are the scripted server's
(a request's JSON characters / 4), which is how the agent's threshold sees them too.

    python bench/compaction.py [--turns 500] [--window 32000]
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

from coder_agent.scripted.records import estimated_tokens
from coder_agent.scripted.server import ScriptedModelServer
from coder_agent.scripted.worker import SUMMARY_MARK, WorkerModel

FILLER = "Keep the answer short; this sentence only makes the prompt longer. " * 3


class Agent:
    """`coder-agent acp` on raw pipes; `call` sends a request and reads lines until its reply."""

    def __init__(self, home: Path, workspace: Path, env: dict[str, str]) -> None:
        command = [sys.executable, "-m", "coder_agent", "acp"]
        self.proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={**os.environ, **env}, cwd=workspace
        )
        self._ids = iter(range(1, 1_000_000))
        self.updates: list[dict[str, Any]] = []

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        request_id = next(self._ids)
        line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()
        while True:
            message = json.loads(self.proc.stdout.readline())
            if message.get("method") == "session/update":
                self.updates.append(message["params"]["update"])
            elif message.get("id") == request_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return dict(message["result"])

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def run(turns: int, window: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        workspace = root / "workspace"
        workspace.mkdir()
        notes = workspace / "notes.txt"
        notes.write_text("".join(f"line {i}: the notes say nothing of importance here\n" for i in range(40)))
        worker = WorkerModel(str(notes))
        with ScriptedModelServer(respond=worker, count_prompt_tokens=True, context_limit=window) as server:
            env = {
                "CODER_AGENT_HOME": str(root / "home"),
                "CODER_AGENT_MODEL": "openai/scripted",
                "CODER_AGENT_API_BASE": server.url,
                "CODER_AGENT_API_KEY": "sk-bench",
                "CODER_AGENT_CONTEXT_WINDOW": str(window),
                "CODER_AGENT_DEFAULT_MODE": "bypass",
                "CODER_AGENT_LOG_LEVEL": "WARNING",
                "XDG_CONFIG_HOME": str(root / "config"),
            }
            agent = Agent(root / "home", workspace, env)
            agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
            session_id = agent.call("session/new", {"cwd": str(workspace), "mcpServers": []})["sessionId"]
            durations = []
            started = time.perf_counter()
            for n in range(1, turns + 1):
                prompt = [{"type": "text", "text": f"TASK {n}: read the notes and say when you are done. {FILLER}"}]
                t0 = time.perf_counter()
                result = agent.call("session/prompt", {"sessionId": session_id, "prompt": prompt})
                durations.append(time.perf_counter() - t0)
                if result["stopReason"] != "end_turn":
                    raise RuntimeError(f"turn {n} stopped with {result['stopReason']}")
            total = time.perf_counter() - started
            agent.close()
            requests = server.requests
    report(turns, window, total, durations, agent.updates, requests, worker)


def report(
    turns: int,
    window: int,
    total: float,
    durations: list[float],
    updates: list[dict[str, Any]],
    requests: list[Any],
    worker: WorkerModel,
) -> None:
    done = [u for u in updates if u.get("toolCallId", "").startswith("compact_") and u.get("status") == "completed"]
    summaries = [r for r in requests if SUMMARY_MARK in str(r.body["messages"][0].get("content"))]
    turn_requests = [r for r in requests if r not in summaries]
    summary_in = sum(estimated_tokens(r.body) for r in summaries)
    summary_out = sum(len(u["content"][1]["content"]["text"]) // 4 for u in done)
    turns_in = sum(estimated_tokens(r.body) for r in turn_requests)
    befores = [u["rawOutput"]["before"] for u in done]
    afters = [u["rawOutput"]["after"] for u in done]
    ms = sorted(d * 1000 for d in durations)
    print(f"turns: {turns} ({len(turn_requests)} model calls), window {window:,} tokens, threshold 80 %")
    p95 = ms[int(0.95 * len(ms))]
    print(f"wall time: {total:.1f} s; per turn median {statistics.median(ms):.0f} ms, p95 {p95:.0f} ms")
    print(f"compactions: {len(done)} (every {turns / max(len(done), 1):.1f} turns), {len(summaries)} summary requests")
    if done:
        print(
            f"context before a compaction: median {statistics.median(befores):,.0f} tokens; "
            f"after: median {statistics.median(afters):,.0f}"
        )
    share = 100 * (summary_in + summary_out) / max(turns_in + summary_in + summary_out, 1)
    print(
        f"compaction's cost: {summary_in:,} prompt + ~{summary_out:,} completion tokens "
        f"({share:.1f} % of all tokens; the turns' own requests: {turns_in:,} prompt tokens)"
    )
    in_order = worker.answered == list(range(1, turns + 1))
    problems = worker.problems[:3] or "none"
    print(f"model checks: {len(worker.answered)} tasks answered, in order: {in_order}; problems: {problems}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--window", type=int, default=32_000)
    args = parser.parse_args()
    run(args.turns, args.window)


if __name__ == "__main__":
    main()
