"""`grep`, `glob` and `list_dir` on ripgrep: Python's regex syntax kept, the fallback when there is no rg, and a
hostile checkout (config, links, pipes, huge lines, a million matches, ignore files that never end) that can
neither steer rg, nor hang it, nor flood it; rg ends with the tool call."""

from __future__ import annotations

import logging
import os
import subprocess
from functools import partial
from pathlib import Path

import anyio
import anyio.abc
import pytest

from coder_agent.agent.tools.base import ToolContext, ToolError
from coder_agent.agent.tools.list_dir import ListDir
from coder_agent.agent.tools.search import Glob, Grep
from coder_agent.agent.workspace.listing import list_files
from coder_agent.agent.workspace.ripgrep import RgOptions, RgRun, locate
from tests.support.hostile_checkout import lay_out, run_bounded
from tests.support.shell_fixtures import NoTerminalClient, call, make_ctx

pytestmark = pytest.mark.anyio

PYTHON = RgOptions(program="/nonexistent/rg")  # the fallback: the Python code
RG_LOG = "coder_agent.agent.workspace.ripgrep"

TEXT = """def alpha(value):
    return value
foo foo
foobar barfoo
abc123 ١٢٣ digits
café Café CAFÉ
a <tag> here
x.y and x-y and cost $5
colon: [x] ph] brackets
tab\there
aaa aab b
"""

PATTERNS = [
    r"(?<=def )alpha",
    r"(?<!bar)foo\b",
    r"(\w+) \1",
    r"(?P<w>foo) (?P=w)",
    r"caf\u00e9",
    r"\N{LATIN SMALL LETTER E WITH ACUTE}",
    r"(?x) a b c  \d+  # a comment",
    r"\d{3} digits",
    r"(?a)\d{3}",
    r"(?a)caf\W",
    r"[[:alpha:]]",
    r"\<tag\>",
    r"a{,2}b",
    r"x\.y",
    r"\$5",
    r"b\there",
    r"(?i)CAFÉ",
    r"foo(?=bar)",
    r"a++b",
    r"(?>a+)b",
    r"(a)?(?(1)a|z)b",
    r"^\s+return",
    r"value\Z",
    r"\Adef",
    r"[^\x00-\x7f]+",
    r"\141ab",
    r"\bb$",
    r"[\w-]+y and",
    r"foo|\n",
]


@pytest.fixture
def ctx(tmp_path: Path, tasks: anyio.abc.TaskGroup) -> ToolContext:
    root = tmp_path / "project"
    root.mkdir()
    return make_ctx(NoTerminalClient(), root, tasks)


def root_of(ctx: ToolContext) -> Path:
    return Path(ctx.cwd)


async def run(tool: Grep | Glob | ListDir, ctx: ToolContext, timeout: float = 10, **arguments: object) -> str:
    with anyio.fail_after(timeout):
        return (await call(tool, ctx, **arguments)).output


def rg_processes(root: Path) -> list[int]:
    """The rg processes working in `root` (a cancelled or finished search leaves none)."""
    rg = locate(None)
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/exe") == rg and os.readlink(f"/proc/{pid}/cwd") == str(root):
                found.append(int(pid))
        except OSError:
            continue
    return found


@pytest.mark.filterwarnings("ignore:Possible nested set:FutureWarning")
@pytest.mark.parametrize("pattern", PATTERNS)
async def test_python_regex_syntax_matches_on_rg_as_it_does_in_python(
    ctx: ToolContext, pattern: str, caplog: pytest.LogCaptureFixture
) -> None:
    (root_of(ctx) / "t.txt").write_text(TEXT)
    caplog.set_level(logging.DEBUG, RG_LOG)
    on_rg = await run(Grep(), ctx, pattern=pattern)
    assert not [record for record in caplog.records if record.name == RG_LOG], "rg was not used"
    assert on_rg == await run(Grep(rg=PYTHON), ctx, pattern=pattern)
    assert on_rg.startswith("t.txt:"), on_rg


async def test_case_insensitive_is_unicode_on_rg_too(ctx: ToolContext) -> None:
    (root_of(ctx) / "t.txt").write_text(TEXT)
    assert await run(Grep(), ctx, pattern="café", case_insensitive=True) == "t.txt:6:café Café CAFÉ"


async def test_a_pattern_that_needs_a_line_break_is_refused_with_why(ctx: ToolContext) -> None:
    (root_of(ctx) / "t.txt").write_text(TEXT)
    for tool in (Grep(), Grep(rg=PYTHON)):
        with pytest.raises(ToolError, match="grep matches one line at a time"):
            await run(tool, ctx, pattern=r"foo\nfoobar")


async def test_a_missing_rg_falls_back_to_python_and_says_so_once(
    ctx: ToolContext, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (root_of(ctx) / "a.py").write_text("alpha\n")
    missing = RgOptions(program=str(tmp_path / "no-such-rg"))  # a path of its own: said once per process
    caplog.set_level(logging.WARNING, RG_LOG)
    assert await run(Grep(rg=missing), ctx, pattern="alpha") == "a.py:1:alpha"
    assert await run(Glob(rg=missing), ctx, pattern="*.py") == "a.py"
    assert await run(ListDir(rg=missing), ctx) == f"{root_of(ctx)}/\n  a.py"
    said = [record.getMessage() for record in caplog.records if record.name == RG_LOG]
    assert said == [f"searching with the built-in Python code instead of ripgrep: no rg at {missing.program}"]


async def test_an_rg_that_is_no_ripgrep_or_the_setting_off_falls_back(ctx: ToolContext) -> None:
    (root_of(ctx) / "a.py").write_text("alpha\n")
    (root_of(ctx) / "b.log").write_text("alpha\n")
    (root_of(ctx) / ".rgignore").write_text("*.log\n")  # only rg reads it: the answers say who searched
    assert await run(Grep(), ctx, pattern="alpha") == "a.py:1:alpha"
    for program in ("/bin/false", "off"):
        assert await run(Grep(rg=RgOptions(program=program)), ctx, pattern="alpha") == "a.py:1:alpha\nb.log:1:alpha"


async def test_a_config_named_by_the_environment_is_not_read(
    ctx: ToolContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root_of(ctx) / "a.py").write_text("alpha\n")
    (root_of(ctx) / ".gitignore").write_text("ignored/\n")
    (root_of(ctx) / "ignored").mkdir()
    (root_of(ctx) / "ignored" / "b.py").write_text("alpha\n")
    config = tmp_path / "ripgreprc"
    config.write_text("--no-ignore\n--files-with-matches\n--max-count=0\n")
    monkeypatch.setenv("RIPGREP_CONFIG_PATH", str(config))
    assert await run(Grep(), ctx, pattern="alpha") == "a.py:1:alpha"
    assert await run(Glob(), ctx, pattern="**/*.py") == "a.py"


async def test_links_are_not_followed_out_of_the_folder(ctx: ToolContext, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "secret.txt").write_text("alpha secret\n")
    (outside / "dir" / "inner.py").write_text("alpha inner\n")
    (root_of(ctx) / "a.py").write_text("alpha\n")
    (root_of(ctx) / "leak.txt").symlink_to(outside / "secret.txt")
    (root_of(ctx) / "linked").symlink_to(outside / "dir")
    assert await run(Grep(), ctx, pattern="alpha") == "a.py:1:alpha"
    assert await run(Glob(), ctx, pattern="**/*") == "a.py"
    assert await run(ListDir(), ctx) == f"{root_of(ctx)}/\n  a.py"


async def test_a_pipe_in_the_tree_is_passed_over(ctx: ToolContext) -> None:
    (root_of(ctx) / "a.py").write_text("alpha\n")
    os.mkfifo(root_of(ctx) / "pipe.py")
    assert await run(Grep(), ctx, pattern="alpha") == "a.py:1:alpha"
    assert await run(Glob(), ctx, pattern="*.py") == "a.py"
    assert await run(ListDir(), ctx) == f"{root_of(ctx)}/\n  a.py"


GREP_A_PIPE = """
import asyncio, sys
from coder_agent.agent.tools.base import ToolError
from coder_agent.agent.tools.search import Grep
from tests.support.shell_fixtures import NoTerminalClient, call, make_ctx

async def main():
    async with __import__("anyio").create_task_group() as tasks:
        ctx = make_ctx(NoTerminalClient(), __import__("pathlib").Path(sys.argv[1]), tasks)
        try:
            print((await call(Grep(), ctx, pattern="alpha", path="pipe.py")).output)
        except ToolError as exc:
            print("refused:", exc)
asyncio.run(main())
"""


def test_a_pipe_named_explicitly_is_refused_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.py")
    try:
        done = run_bounded(GREP_A_PIPE, [str(tmp_path)], timeout=30)
    except subprocess.TimeoutExpired:
        raise AssertionError("grep blocked on the pipe") from None
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == f"refused: {tmp_path / 'pipe.py'} is not searched: it is a pipe, not a regular file"


async def test_a_huge_line_is_cut_and_a_huge_file_passed_over(ctx: ToolContext) -> None:
    (root_of(ctx) / "long.txt").write_text("needle " + "x" * 3_000_000 + "\n")
    with (root_of(ctx) / "big.txt").open("w") as handle:
        handle.write("needle\n" * 900_000)  # 6.3 MB: past the size cap
    [line] = (await run(Grep(), ctx, pattern="needle")).splitlines()
    assert line == "long.txt:1:needle " + "x" * 293 + "…"


async def test_a_million_matches_stop_at_the_cap_and_rg_is_gone(ctx: ToolContext) -> None:
    for n in range(4):
        (root_of(ctx) / f"hits{n}.txt").write_text("hit\n" * 1_000_000)
    lines = (await run(Grep(), ctx, pattern="hit", max_results=5)).splitlines()
    assert lines == [f"hits0.txt:{n}:hit" for n in range(1, 6)] + [
        "(stopped at 5 matches: narrow the pattern, path or glob)"
    ]
    assert rg_processes(root_of(ctx)) == []


@pytest.mark.parametrize("case", ["gitignore-zero", "gitignore-fifo", "ignore-own-output"])
async def test_an_ignore_file_that_never_ends_ends_rg_and_the_fallback_lists(
    tmp_path: Path, case: str, caplog: pytest.LogCaptureFixture
) -> None:
    checkout = lay_out([case], tmp_path / "project", tmp_path / "home")
    (checkout.project / "a.txt").write_text("alpha\n")
    (checkout.project / "sub").mkdir(exist_ok=True)
    (checkout.project / "sub" / "b.txt").write_text("alpha\n")
    caplog.set_level(logging.DEBUG, RG_LOG)
    started = anyio.current_time()
    with anyio.fail_after(20):
        listing = await list_files(str(checkout.project))
    assert anyio.current_time() - started < 5
    assert (listing.source, [name for name in listing.files if name.endswith(".txt")]) == (
        "walk",
        ["a.txt", "sub/b.txt"],
    )
    if case.startswith("gitignore"):  # the Python walk reads only .gitignore files, and says which it could not
        [note] = listing.notes
        assert note.startswith((".gitignore was not read: ", "sub/.gitignore was not read: "))
    why = "rg was waiting on a pipe" if case != "gitignore-zero" else "rg exited with status"
    assert any(why in record.getMessage() for record in caplog.records), caplog.text
    assert rg_processes(checkout.project) == []


async def test_every_run_is_bounded_in_time(tmp_path: Path, tasks: anyio.abc.TaskGroup) -> None:
    """With the watch off, an ignore file that is a pipe hangs rg: the time bound still ends it."""
    checkout = lay_out(["gitignore-fifo"], tmp_path / "project", tmp_path / "home")
    (checkout.project / "a.txt").write_text("alpha\n")
    ctx = make_ctx(NoTerminalClient(), checkout.project, tasks)
    bounded = RgOptions(timeout=0.5, watch=False)
    output = await run(Grep(rg=bounded), ctx, pattern="alpha")
    assert output.endswith("\n(the search stopped after 0.5 s: narrow the path or glob)")
    assert rg_processes(checkout.project) == []


async def test_a_cancelled_search_kills_rg(tmp_path: Path, tasks: anyio.abc.TaskGroup) -> None:
    checkout = lay_out(["gitignore-fifo"], tmp_path / "project", tmp_path / "home")
    ctx = make_ctx(NoTerminalClient(), checkout.project, tasks)
    hanging = RgOptions(timeout=600, watch=False)  # only the cancel can end it
    with anyio.fail_after(10):
        async with anyio.create_task_group() as search:
            search.start_soon(partial(call, Grep(rg=hanging), ctx, pattern="alpha"))
            while not (pids := rg_processes(checkout.project)):  # noqa: ASYNC110 (rg starting sets no event)
                await anyio.sleep(0.02)
            search.cancel_scope.cancel()
    assert pids and rg_processes(checkout.project) == [], "rg outlived the cancelled call"


STAND_IN = """#!/bin/sh
# an rg that answers --version, then does nothing at all when asked to search
if [ "$2" = "--version" ]; then exec {rg} "$@"; fi
exec sleep 60
"""


async def test_an_rg_that_hangs_using_no_cpu_is_ended_and_python_searches(
    ctx: ToolContext, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    stand_in = tmp_path / "idle-rg"
    stand_in.write_text(STAND_IN.format(rg=locate(None)))
    stand_in.chmod(0o755)
    (root_of(ctx) / "a.py").write_text("alpha\n")
    caplog.set_level(logging.DEBUG, RG_LOG)
    started = anyio.current_time()
    assert await run(Grep(rg=RgOptions(program=str(stand_in), stall=0.5)), ctx, pattern="alpha") == "a.py:1:alpha"
    assert anyio.current_time() - started < 5
    assert any("rg used next to no CPU for 0.5 s" in record.getMessage() for record in caplog.records)


def test_what_counts_as_rg_failing() -> None:
    """A folder rg could not read (as root no folder is unreadable, so its status is given here) is passed over;
    a pattern rg could not compile, a crash or a kill is a failure, and the caller searches in Python."""
    unreadable = "rg: ./locked: Permission denied (os error 13)\n"
    assert RgRun(returncode=2, stderr=unreadable).failure is None
    assert RgRun(returncode=2, stderr=unreadable, lines=3).failure is None
    assert RgRun(returncode=1).failure is None and RgRun(returncode=0, lines=1).failure is None
    assert RgRun(returncode=2, stderr="rg: regex parse error:\n    (?<=a+)b\n").failure == (
        "rg exited with status 2: rg: regex parse error:"
    )
    assert RgRun(returncode=-6, stderr="memory allocation of 1073741824 bytes failed\n").failure == (
        "rg exited with status -6: memory allocation of 1073741824 bytes failed"
    )
    assert RgRun(returncode=-9, stopped=True).failure is None and RgRun(returncode=-9, timed_out=True).failure is None
    assert RgRun(returncode=-9, ended_for="rg was waiting on a pipe").failure == "rg was waiting on a pipe"


async def test_a_python_pattern_neither_rg_engine_compiles_is_searched_in_python(
    ctx: ToolContext, caplog: pytest.LogCaptureFixture
) -> None:
    (root_of(ctx) / "t.txt").write_text("a" * 70_000 + "b\n")
    caplog.set_level(logging.DEBUG, RG_LOG)
    found = await run(Grep(), ctx, pattern="(?<=a{70000})b")  # PCRE2 counts to 65,535
    assert found == "t.txt:1:" + "a" * 300 + "…"
    assert any("could not be compiled" in record.getMessage() for record in caplog.records), caplog.text
