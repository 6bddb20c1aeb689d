"""How soon a new session's slash commands arrive: `session/new` reply -> `available_commands_update`.

Each run spawns a fresh `coder-agent acp` (a fresh data folder; a user command and a project command on disk),
sends `initialize` and `session/new` at once, and times the reply and the first `available_commands_update` from
the spawn. A `/` typed as soon as the session shows only the client's own commands until they arrive.

    python bench/commands.py [--runs 9]
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


def one_run(folder: Path) -> tuple[float, float]:
    """(spawn -> session/new reply, spawn -> the first commands), in ms."""
    (folder / "config" / "coder-agent" / "commands").mkdir(parents=True, exist_ok=True)
    (folder / "config" / "coder-agent" / "commands" / "standup.md").write_text("Write my standup.\n")
    project = folder / "project"
    (project / ".coder-agent" / "commands").mkdir(parents=True, exist_ok=True)
    (project / ".coder-agent" / "commands" / "deploy.md").write_text("Deploy to staging.\n")
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(folder),
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
        "XDG_CONFIG_HOME": str(folder / "config"),
        "CODER_AGENT_HOME": str(folder / "home"),
        "CODER_AGENT_MODEL": "openai/bench",
        "CODER_AGENT_API_BASE": "http://127.0.0.1:9/v1",
        "CODER_AGENT_API_KEY": "sk-bench",
    }
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "coder_agent", "acp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=project,
    )
    assert proc.stdin is not None and proc.stdout is not None
    messages: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": str(project), "mcpServers": []}},
    ]
    proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
    proc.stdin.flush()
    reply = commands = 0.0
    try:
        while not (reply and commands):
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError("the agent ended before announcing its commands")
            message = json.loads(line)
            now = (time.perf_counter() - start) * 1000
            if message.get("id") == 1:
                reply = now
            update = message.get("params", {}).get("update", {})
            if update.get("sessionUpdate") == "available_commands_update" and not commands:
                commands = now
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    return reply, commands


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    replies, commands = [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as folder:
            reply, announced = one_run(Path(folder))
        replies.append(reply)
        commands.append(announced)
    print(f"runs: {args.runs} (medians, ms; load {os.getloadavg()[0]:.1f})")
    print(f"spawn -> session/new reply                 {statistics.median(replies):7.0f}")
    print(f"spawn -> available_commands_update         {statistics.median(commands):7.0f}")
    gap = statistics.median(c - r for c, r in zip(commands, replies, strict=True))
    print(f"session/new reply -> commands              {gap:7.0f}")


if __name__ == "__main__":
    main()
