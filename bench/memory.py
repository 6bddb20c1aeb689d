"""The agent's memory once it has answered: RSS after the first prompt, and after a minute of idle, per wire.

A fresh `coder-agent acp` per model (the scripted model server in its own process): `initialize`, `session/new`,
a first prompt; RSS from /proc when the prompt is answered, then again after `--idle` seconds with nothing to do
(whatever loads in the background has loaded by then). Models: an OpenAI-compatible one (`openai/bench`) and an
Anthropic one (`anthropic/claude-sonnet-4-5`); `--pythonpath DIR` runs another checkout's agent (before/after).

    python bench/memory.py [--idle 60] [--pythonpath DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from coder_agent.scripted.script import Reply, Script

MODELS = ["openai/bench", "anthropic/claude-sonnet-4-5"]


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def call(proc: subprocess.Popen[bytes], request_id: int, method: str, params: dict[str, object]) -> dict[str, object]:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(
        (json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}) + "\n").encode()
    )
    proc.stdin.flush()
    while True:
        message = json.loads(proc.stdout.readline())
        if message.get("id") == request_id:
            return message


def measure(env: dict[str, str], cwd: str, idle: float) -> tuple[float, float]:
    command = [sys.executable, "-m", "coder_agent", "acp"]
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.DEVNULL}
    proc = subprocess.Popen(command, env=env, cwd=cwd, **pipes)  # type: ignore[call-overload]
    try:
        call(proc, 0, "initialize", {"protocolVersion": 1})
        new = call(proc, 1, "session/new", {"cwd": cwd, "mcpServers": []})
        session_id = new["result"]["sessionId"]  # type: ignore[index]
        call(proc, 2, "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]})
        after_prompt = rss_mb(proc.pid)
        time.sleep(idle)
        return after_prompt, rss_mb(proc.pid)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--idle", type=float, default=60.0)
    parser.add_argument("--pythonpath", default="", help="run the agent of another checkout")
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
            url = server.stdout.readline().strip()
            print(f"RSS in MB (idle {args.idle:g} s){' of ' + args.pythonpath if args.pythonpath else ''}")
            for model in MODELS:
                base = url.removesuffix("/v1") if model.startswith("anthropic/") else url
                env = dict(os.environ, CODER_AGENT_MODEL=model, CODER_AGENT_API_BASE=base, CODER_AGENT_API_KEY="sk")
                env["CODER_AGENT_HOME"] = f"{tmp}/home-{model.split('/')[0]}"
                if args.pythonpath:
                    env["PYTHONPATH"] = args.pythonpath
                after_prompt, after_idle = measure(env, tmp, args.idle)
                print(f"{model:32} after the first prompt {after_prompt:6.1f}   after idle {after_idle:6.1f}")
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
