"""What seeing a command's changes costs, on a tree of N files.

A git work tree of N files (100 folders), and the same tree outside git. Prints the median and p90 over R rounds
of the agent's whole per-command cost (`Watch.start()` + `Watch.changes()`: a snapshot of the root before and one
after, compared; see `agent/workspace/snapshots.py`), for a command that changes one file and for one that changes
nothing, then the same without the inotify watch (git compares every file with its index, before and after),
the first command's cost (the watch set up and the root's first snapshot, every file hashed), one git call of
the agent's next to bare git (what keeping the checkout's programs off costs: see `prestart/git_calls.py`), and the
stat-walk floor.

    python bench/changes.py [--files 10000] [--rounds 21]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import anyio

from coder_agent.agent.workspace import fs_events
from coder_agent.agent.workspace.changes import Watch
from coder_agent.agent.workspace.git import git_output


def make_tree(root: str, files: int, git: bool) -> None:
    per_folder = max(files // 100, 1)
    for folder in range(100):
        os.makedirs(os.path.join(root, f"pkg{folder}"), exist_ok=True)
        for index in range(per_folder):
            path = os.path.join(root, f"pkg{folder}", f"m{index}.py")
            with open(path, "w") as handle:
                handle.write(f"value = {folder * index}\n" * 10)
            # An hour old, as a checkout's files are: a file as new as the index is "racily clean" to git, and
            # every `git status` would read all of them again (the agent never rewrites the user's index).
            os.utime(path, (time.time() - 3600, time.time() - 3600))
    with open(os.path.join(root, ".gitignore"), "w") as handle:
        handle.write("*.log\nbuild/\n")
    if git:
        run = {"cwd": root, "check": True, "capture_output": True}
        subprocess.run(["git", "init", "-q"], **run)  # type: ignore[call-overload]
        subprocess.run(["git", "add", "-A"], **run)  # type: ignore[call-overload]
        subprocess.run(["git", "-c", "user.email=b@b", "-c", "user.name=b", "commit", "-qm", "tree"], **run)  # type: ignore[call-overload]


def _append(path: str, text: str) -> None:
    with open(path, "a") as handle:
        handle.write(text)


async def per_command(root: str, home: Path, rounds: int, change: bool) -> list[float]:
    """The agent's cost per command: `Watch.start()` before it, `Watch.changes()` after (the inotify watch of
    the root lets both reuse the last snapshot when nothing happened; see `agent/workspace/fs_events.py`)."""
    target = os.path.join(root, "pkg7", "m3.py")
    costs = []
    for round_ in range(rounds):
        watch = Watch([root], home)
        started = time.perf_counter()
        await watch.start()
        looked = time.perf_counter() - started
        if change:
            await anyio.to_thread.run_sync(_append, target, f"# edit {round_}\n")  # the "command"
        started = time.perf_counter()
        found = await watch.changes()
        watch.close()
        costs.append(looked + time.perf_counter() - started)
        assert [seen.path for seen in found] == ([target] if change else []), found
    return costs


async def without_watch(root: str, home: Path, rounds: int) -> list[float]:
    """A command on a root that cannot be watched (another OS, a network file system, too many folders): the
    snapshots before and after each ask git what changed since its index."""
    fs_events.forget(root)
    fs_events._unwatchable[root] = "the benchmark measures the fallback"
    try:
        await per_command(root, home, 1, True)  # the first one looks at every file: not what is measured
        return await per_command(root, home, rounds, True)
    finally:
        fs_events.forget(root)


async def first_look(root: str, home: Path) -> float:
    """The first command on a root: the watch is set up (every folder walked) and a first snapshot taken (every
    file hashed, the shadow made)."""
    started = time.perf_counter()
    watch = Watch([root], home)
    await watch.start()
    watch.close()
    return time.perf_counter() - started


async def one_git_call(root: str, rounds: int, agents: bool, args: tuple[str, ...]) -> tuple[list[float], float]:
    """One `git ARGS`: the agent's own call (with what keeps the checkout's programs off), or bare git. The wall
    times, and the CPU time per call of git and of this process together (what the load of a shared machine
    barely moves)."""
    costs = []
    cpu_before = _cpu()
    for _ in range(rounds):
        started = time.perf_counter()
        if agents:
            assert await git_output(root, *args) is not None
        else:
            await anyio.run_process(["git", *args], cwd=root)
        costs.append(time.perf_counter() - started)
    return costs, (_cpu() - cpu_before) / rounds


def _cpu() -> float:
    children, own = resource.getrusage(resource.RUSAGE_CHILDREN), resource.getrusage(resource.RUSAGE_SELF)
    return children.ru_utime + children.ru_stime + own.ru_utime + own.ru_stime


def show_call(label: str, measured: tuple[list[float], float]) -> None:
    costs, cpu = measured
    print(f"{label:34s} median {statistics.median(costs) * 1000:6.1f} ms   CPU {cpu * 1000:6.1f} ms per call")


def show(label: str, costs: list[float]) -> None:
    costs = sorted(costs)
    p90 = costs[int(len(costs) * 0.9)]
    print(f"{label:34s} median {statistics.median(costs) * 1000:6.1f} ms   p90 {p90 * 1000:6.1f} ms")


def stat_floor(root: str) -> float:
    started = time.perf_counter()
    for folder, _, names in os.walk(root):
        for name in names:
            os.stat(os.path.join(folder, name))
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=21)
    args = parser.parse_args()
    print(f"tree of {args.files} files; {args.rounds} rounds; load {os.getloadavg()[0]:.2f}")
    for git in (True, False):
        with tempfile.TemporaryDirectory() as root, tempfile.TemporaryDirectory() as data:
            home = Path(data)
            make_tree(root, args.files, git)
            kind = "git work tree" if git else "no git"
            print(f"{kind}: first command (watch + first snapshot) {anyio.run(first_look, root, home) * 1000:6.1f} ms")
            cpu_before = _cpu()
            show(f"{kind}: command changing a file", anyio.run(per_command, root, home, args.rounds, True))
            cpu = (_cpu() - cpu_before) / args.rounds
            print(f"{'  its CPU (git and the agent)':34s} {cpu * 1000:6.1f} ms per command")
            show(f"{kind}: command changing nothing", anyio.run(per_command, root, home, args.rounds, False))
            show(f"{kind}: without the watch", anyio.run(without_watch, root, home, args.rounds))
            if git:
                for call in (("rev-parse", "HEAD"), ("status", "--porcelain=v2", "-z", "-uall")):
                    for agents in (True, False):
                        who = "the agent's" if agents else "bare git"
                        measured = anyio.run(one_git_call, root, args.rounds, agents, call)
                        show_call(f"  git {call[0]}, {who}", measured)
            if not git:
                print(f"{'  os.walk + stat of every file once':34s} {stat_floor(root) * 1000:6.1f} ms (for scale)")
    print("target: <= 50 ms per command on 10,000 files")


if __name__ == "__main__":
    main()
