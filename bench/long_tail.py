"""A long-tail provider's first token (one only litellm speaks): the prompt sent at once after `session/new`, and
2 s later, with this checkout's agent and (`--before DIR`) another's.

litellm's import now starts as soon as a session's model needs it (at `session/new`), not at the first prompt or
after ten quiet seconds, so idle time before the prompt shortens the wait. The stand-in for Bedrock is litellm's
`custom_openai` provider at the scripted server: Bedrock's own wire (AWS event streams, SigV4) is not scripted, and
what this measures (litellm's import and first call) is the same for every provider litellm speaks.

    python bench/long_tail.py [--runs 3] [--before DIR]
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

from coder_agent.scripted.script import Reply, Script

MODEL = "custom_openai/bench"


def first_chunk(env: dict[str, str], cwd: str, wait: float) -> float:
    """Seconds from sending the prompt to its first agent_message_chunk."""
    command = [sys.executable, "-m", "coder_agent", "acp"]
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.DEVNULL}
    proc = subprocess.Popen(command, env=env, cwd=cwd, **pipes)  # type: ignore[call-overload]
    assert proc.stdin is not None and proc.stdout is not None

    def send(request_id: int, method: str, params: dict[str, object]) -> None:
        assert proc.stdin is not None
        line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}) + "\n"
        proc.stdin.write(line.encode())
        proc.stdin.flush()

    def until(done: object) -> dict[str, object]:
        assert proc.stdout is not None
        while True:
            message = json.loads(proc.stdout.readline())
            if done(message):  # type: ignore[operator]
                return message

    try:
        send(0, "initialize", {"protocolVersion": 1})
        until(lambda m: m.get("id") == 0)
        send(1, "session/new", {"cwd": cwd, "mcpServers": []})
        session_id = until(lambda m: m.get("id") == 1)["result"]["sessionId"]  # type: ignore[index]
        time.sleep(wait)
        sent = time.perf_counter()
        send(2, "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]})
        until(lambda m: ((m.get("params") or {}).get("update") or {}).get("sessionUpdate") == "agent_message_chunk")
        seconds = time.perf_counter() - sent
        until(lambda m: m.get("id") == 2)
        return seconds
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--before", default="", help="another checkout to measure in the same run")
    args = parser.parse_args()
    agents = {"this checkout": ""} | ({f"before ({args.before})": args.before} if args.before else {})
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "script.json"
        Script(default=Reply.text("Hello", " there", ".")).save(script)
        server = subprocess.Popen(
            [sys.executable, "-m", "coder_agent.scripted", "--script", str(script)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        results: dict[tuple[str, float], list[float]] = {}
        try:
            assert server.stdout is not None
            url = server.stdout.readline().strip()
            base = dict(os.environ, CODER_AGENT_MODEL=MODEL, CODER_AGENT_API_BASE=url, CODER_AGENT_API_KEY="sk")
            for run in range(args.runs):
                for label, path in agents.items():
                    for wait in (0.0, 2.0):
                        env = dict(base, CODER_AGENT_HOME=f"{tmp}/h-{run}-{wait}-{len(path)}")
                        if path:
                            env["PYTHONPATH"] = path
                        results.setdefault((label, wait), []).append(first_chunk(env, tmp, wait))
        finally:
            server.terminate()
            server.wait()
    print(f"{MODEL} (litellm), prompt -> first chunk, medians of {args.runs} (s); load {os.getloadavg()[0]:.1f}")
    for (label, wait), seconds in results.items():
        print(f"  {label:40} prompt {wait:g} s after session/new: {statistics.median(seconds):6.2f}")


if __name__ == "__main__":
    main()
