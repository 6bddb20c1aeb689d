"""What undo's snapshots cost: per turn on trees of 10,000 and 100,000 files (in git and not), and how the data
folder grows over 100 turns that each change one file of a 10,000-file tree.

Per turn (in this process, the agent's own code): the snapshot before a command and the one after it
(`changes.Watch`), what the changed file held before read from the shadow, and the end of the turn's upkeep
(`snapshot_upkeep.maintain`); for a command that changes one file, for one that changes nothing, and with the
root unwatchable (git compares every file with its index instead of inotify naming what changed). Also the first
snapshot of a tree (every file hashed) and the first of a new process (git's index finds them unchanged).

Growth: the real agent (`coder-agent acp`, mode bypass, the scripted model) runs 100 prompts in a 10,000-file git
work tree, each one command that appends to one file; the data folder's size on disk (blocks) is printed after
the first turn and every 25, split into the session store and the snapshots.

    python bench/snapshots.py [--sizes 10000,100000] [--rounds 15] [--turns 100] [--skip-growth]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import anyio
import client  # bench/client.py: this checkout first on sys.path, and the agent process it starts

from coder_agent.agent.workspace import fs_events, snapshot_upkeep, snapshots
from coder_agent.agent.workspace.changes import Watch
from coder_agent.agent.workspace.snapshot_pass import MAX_FILE_BYTES
from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer

OFFLINE = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS": "True"}


def make_tree(root: Path, files: int, git: bool) -> None:
    folders = max(files // 100, 1)
    hour_ago = time.time() - 3600  # as a checkout's files are (a file as new as git's index is "racily clean")
    for folder in range(folders):
        (root / f"pkg{folder}").mkdir(parents=True, exist_ok=True)
        for index in range(files // folders):
            path = root / f"pkg{folder}" / f"m{index}.py"
            path.write_text(f"value = {folder * index}\n" * 10)
            os.utime(path, (hour_ago, hour_ago))
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    if git:
        for command in ("git init -q", "git add -A", "git -c user.email=b@b -c user.name=b commit -qm tree"):
            subprocess.run(command, shell=True, cwd=root, check=True, capture_output=True)


def disk(where: Path) -> int:
    """Bytes a file or a folder takes on the disk."""
    if not where.exists():
        return 0
    paths = [where] if where.is_file() else [path for path in where.rglob("*") if path.is_file()]
    return sum(path.lstat().st_blocks * 512 for path in paths)


async def first(home: Path, root: Path) -> float:
    started = time.perf_counter()
    await anyio.to_thread.run_sync(snapshots.snapshot, home, str(root))
    return time.perf_counter() - started


def new_process(home: Path, root: Path) -> None:
    """Forget what this process knows of the root, as a new agent process would not know it."""
    snapshots.forget(home, str(root))
    fs_events.forget(str(root))


async def per_turn(home: Path, root: Path, rounds: int, change: bool) -> list[float]:
    target = root / "pkg7" / "m3.py"
    costs = []
    for round_ in range(rounds):
        watch = Watch([str(root)], home)
        started = time.perf_counter()
        await watch.start()
        looked = time.perf_counter() - started
        if change:
            await anyio.to_thread.run_sync(append, target, f"# edit {round_}\n")  # the "command"
        started = time.perf_counter()
        found = await watch.changes()
        if found:
            await watch.contents(str(root), [seen.before for seen in found], MAX_FILE_BYTES, 64 * MAX_FILE_BYTES)
        watch.close()
        repo = snapshots.repo_of(home, str(root))
        await anyio.to_thread.run_sync(snapshot_upkeep.maintain, repo)
        costs.append(looked + time.perf_counter() - started)
        assert [seen.path for seen in found] == ([str(target)] if change else []), found
    return costs


def append(path: Path, text: str) -> None:
    with path.open("a") as handle:
        handle.write(text)


def show(label: str, costs: list[float]) -> None:
    costs = sorted(costs)
    p90 = costs[int(len(costs) * 0.9)]
    print(f"  {label:44s} median {statistics.median(costs) * 1000:7.1f} ms   p90 {p90 * 1000:7.1f} ms", flush=True)


def costs(files: int, rounds: int) -> None:
    for git in (True, False):
        with tempfile.TemporaryDirectory() as tmp:
            root, home = Path(tmp) / "tree", Path(tmp) / "home"
            root.mkdir()
            make_tree(root, files, git)
            kind = "git work tree" if git else "no repository"
            print(f"{files:,} files, {kind}; load {os.getloadavg()[0]:.2f}", flush=True)
            print(f"  {'first snapshot (every file hashed)':44s} {anyio.run(first, home, root) * 1000:7.0f} ms")
            new_process(home, root)
            print(f"  {'first snapshot of a new process':44s} {anyio.run(first, home, root) * 1000:7.0f} ms")
            print(f"  {'the shadow on disk':44s} {disk(home) / 1024 / 1024:7.1f} MB")
            show("turn: a command changing one file", anyio.run(per_turn, home, root, rounds, True))
            show("turn: a command changing nothing", anyio.run(per_turn, home, root, rounds, False))
            new_process(home, root)
            fs_events._unwatchable[str(root)] = "the benchmark measures the fallback"
            show("turn changing one file, root not watched", anyio.run(per_turn, home, root, rounds, True))
            fs_events.forget(str(root))


async def growth(turns: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root, home = Path(tmp) / "tree", Path(tmp) / "home"
        root.mkdir()
        make_tree(root, 10_000, git=True)
        with ScriptedModelServer() as server:
            for turn in range(turns):
                command = f"printf '# turn {turn}\\n' >> pkg{turn % 100}/m{turn % 7}.py"
                server.enqueue(Reply.tool_calls([tool_call("run_command", {"command": command})]), Reply.text("ok"))
            env = {
                **os.environ,
                **OFFLINE,
                "CODER_AGENT_HOME": str(home),
                "CODER_AGENT_MODEL": "openai/scripted",
                "CODER_AGENT_API_BASE": server.url,
                "CODER_AGENT_API_KEY": "sk-bench",
                "CODER_AGENT_DEFAULT_MODE": "bypass",
                "CODER_AGENT_LOG_LEVEL": "WARNING",
                "XDG_CONFIG_HOME": str(Path(tmp) / "config"),
            }
            print(f"growth: {turns} turns, each changing one file of a 10,000-file git work tree", flush=True)
            print(f"  {'after turn':>10} {'data folder':>12} {'sessions.db':>12} {'snapshots':>10} {'turn':>8}")
            async with client.agent(env, root, stderr=Path(tmp) / "agent.log") as running:
                connection = running.connection
                await connection.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
                new = await connection.request("session/new", {"cwd": str(root), "mcpServers": []})
                for turn in range(1, turns + 1):
                    started = time.perf_counter()
                    prompt = {"sessionId": new["sessionId"], "prompt": [{"type": "text", "text": f"turn {turn}"}]}
                    with anyio.fail_after(120):
                        await connection.request("session/prompt", prompt)
                    took = time.perf_counter() - started
                    if turn == 1 or turn % 25 == 0:
                        store = sum(disk(path) for path in home.glob("sessions.db*"))
                        shadows = disk(home / "snapshots")
                        mb = 1024 * 1024
                        print(
                            f"  {turn:>10} {disk(home) / mb:>9.2f} MB {store / mb:>9.2f} MB {shadows / mb:>7.2f} MB"
                            f" {took * 1000:>5.0f} ms",
                            flush=True,
                        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="tree sizes, comma-separated")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--skip-growth", action="store_true")
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
    for size in (int(text) for text in args.sizes.split(",")):
        costs(size, args.rounds)
    if not args.skip_growth:
        anyio.run(growth, args.turns)


if __name__ == "__main__":
    main()
