"""What a command that makes or rewrites big files costs the agent: its memory, and how long it stops answering.

The real agent (`python -m coder_agent acp`, mode `bypass`, started by the eval harness's launcher) in a fresh git
work tree per case, with the scripted model server: a first turn runs `true` (so what the first command imports
is in), then the measured turn runs the case's command. Meanwhile a request the agent answers on its event loop
(an unknown method: -32601) is sent again and again; its slowest answer is how long the loop stood still. The
agent's peak RSS is reset before the measured turn (`/proc/PID/clear_refs`), so the peak is that turn's own.

Cases: a 1 GB sparse file made (`truncate`), a 40 MB text file made, a 26 MB tracked file with one line rewritten,
a 2.6 MB tracked file shuffled (difflib is quadratic on it). Prints per case: RSS before the turn, the turn's peak
RSS and its excess over that, the turn's wall time, and the slowest answer to a request during it.

    python bench/big_changes.py [--source DIR] [--case NAME]

`--source DIR`: run the agent from another checkout's `coder_agent` (for example the commit before a change,
from `git archive`), so the same script prints the figures before and after it.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import client  # noqa: F401  (bench/client.py puts this checkout first on sys.path)
from client import Editor

from coder_agent.acp.errors import RequestError
from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from evals.harness.agent_process import launch_agent
from evals.harness.config import python_env
from evals.harness.wire import WireLog

WAIT = 120.0
PING_EVERY = 0.01
OFFLINE = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS": "True",
    "HF_HUB_OFFLINE": "1",
}


def sh(cwd: Path, script: str) -> None:
    subprocess.run(["/bin/sh", "-c", script], cwd=cwd, check=True, capture_output=True)


def commit(project: Path) -> None:
    sh(project, "git init -q && git add -A && git -c user.email=b@b -c user.name=b commit -qm files")


def small_project(project: Path) -> None:
    (project / "README.md").write_text("a project\n")
    commit(project)


def table_project(project: Path) -> None:
    row = "row {:08d}: some data for the table, as a large generated file has\n"
    (project / "table.txt").write_text("".join(row.format(number) for number in range(400_000)))
    commit(project)


def numbers_project(project: Path) -> None:
    lines = [f"{number}\n" for number in range(400_000)]
    (project / "numbers.txt").write_text("".join(lines))
    commit(project)
    random.Random(20).shuffle(lines)
    (project.parent / "shuffled.txt").write_text("".join(lines))


CASES: dict[str, tuple[str, Callable[[Path], None], str]] = {
    "sparse-1gb": ("a 1 GB sparse file made", small_project, "truncate -s 1G disk.img"),
    "made-40mb": (
        "a 40 MB text file made",
        small_project,
        "yes 'a line of text, as a log or a dump has' | head -c 40000000 > forty.txt",
    ),
    "rewrite-26mb": ("a 26 MB tracked file, one line rewritten", table_project, "sed -i '1s/^/x/' table.txt"),
    "shuffle-2.6mb": ("a 2.6 MB tracked file shuffled", numbers_project, "cp ../shuffled.txt numbers.txt"),
}


def status(pid: int) -> dict[str, int]:
    """The kB figures of /proc/PID/status (VmRSS, VmHWM ...)."""
    figures = {}
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            name, _, value = line.partition(":")
            if value.strip().endswith("kB"):
                figures[name] = int(value.split()[0])
    return figures


def reset_peak(pid: int) -> None:
    with open(f"/proc/{pid}/clear_refs", "w") as handle:
        handle.write("5")  # the peak RSS (VmHWM) starts again from the RSS now


async def measure(name: str, source: Path | None) -> dict[str, Any]:
    title, setup, command = CASES[name]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        project = root / "project"
        project.mkdir()
        setup(project)
        with ScriptedModelServer() as server:
            server.enqueue(
                Reply.tool_calls([tool_call("run_command", {"command": "true"})]),
                Reply.text("ready"),
                Reply.tool_calls([tool_call("run_command", {"command": command})]),
                Reply.text("done"),
            )
            env = python_env(
                {
                    **os.environ,
                    **OFFLINE,
                    "CODER_AGENT_HOME": str(root / "home"),
                    "CODER_AGENT_MODEL": "openai/scripted",
                    "CODER_AGENT_API_BASE": server.url,
                    "CODER_AGENT_API_KEY": "sk-bench",
                    "CODER_AGENT_DEFAULT_MODE": "bypass",
                    "CODER_AGENT_LOG_LEVEL": "WARNING",
                    "XDG_CONFIG_HOME": str(root / "config"),
                }
            )
            if source is not None:
                env["PYTHONPATH"] = os.pathsep.join([str(source), env["PYTHONPATH"]])
            wire = WireLog(check=False)
            launch = launch_agent(Editor(), wire, env=env, cwd=project, stderr_path=root / "agent.stderr.log")
            async with launch as running:
                connection, pid = running.connection, running.process.pid
                with anyio.fail_after(WAIT):
                    await connection.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
                    new = await connection.request("session/new", {"cwd": str(project), "mcpServers": []})
                    session = {"sessionId": new["sessionId"]}
                    await connection.request("session/prompt", {**session, "prompt": [{"type": "text", "text": "go"}]})
                    rss_before = status(pid)["VmRSS"]
                    reset_peak(pid)
                    slowest = 0.0
                    done = anyio.Event()

                    async def ping() -> None:
                        nonlocal slowest
                        while not done.is_set():
                            started = time.perf_counter()
                            try:
                                await connection.request("bench/ping", {})
                            except RequestError:
                                pass  # method not found: answered, which is all that is timed
                            slowest = max(slowest, time.perf_counter() - started)
                            await anyio.sleep(PING_EVERY)

                    async with anyio.create_task_group() as group:
                        group.start_soon(ping)
                        started = time.perf_counter()
                        prompt = {**session, "prompt": [{"type": "text", "text": "do it"}]}
                        result = await connection.request("session/prompt", prompt)
                        turn = time.perf_counter() - started
                        done.set()
                    peak = status(pid)["VmHWM"]
            if result["stopReason"] != "end_turn":
                raise RuntimeError(f"{name}: the turn stopped with {result['stopReason']}")
    return {"case": title, "rss": rss_before, "peak": peak, "turn": turn, "slowest": slowest}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, help="a checkout whose coder_agent the agent runs")
    parser.add_argument("--case", choices=sorted(CASES), action="append", help="run only these cases")
    args = parser.parse_args()
    which = f"coder_agent from {args.source}" if args.source else "this checkout"
    print(f"{which}; {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    print(f"{'case':<42} {'RSS before':>11} {'peak':>9} {'excess':>9} {'turn':>8} {'slowest answer':>15}")
    for name in args.case or list(CASES):
        row = anyio.run(measure, name, args.source)
        excess = row["peak"] - row["rss"]
        print(
            f"{row['case']:<42} {row['rss'] / 1024:>8.0f} MB {row['peak'] / 1024:>6.0f} MB {excess / 1024:>6.0f} MB"
            f" {row['turn']:>6.2f} s {row['slowest'] * 1000:>12.0f} ms"
        )
        sys.stdout.flush()


if __name__ == "__main__":
    main()
