"""`system_prompt_now` (stdlib, blocking: the early first model call) says exactly what `system_prompt` says."""

from __future__ import annotations

import datetime
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from coder_agent.agent.workspace.environment import system_prompt
from coder_agent.prestart import git_calls
from coder_agent.prestart.git_calls import command_line, overrides_of
from coder_agent.prestart.project_facts import MAX_INSTRUCTIONS_CHARS, system_prompt_now
from tests.support.hostile_git import lay_out

pytestmark = pytest.mark.anyio

TODAY = datetime.date(2024, 2, 29)


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(autouse=True)
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """git never looks above tmp_path for a repository."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    yield


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A checkout with 25 changed files, a filter driver that leaves a mark when run, and both instruction files
    (AGENTS.md longer than the cap, CLAUDE.md with CRLF line ends and a byte that is not UTF-8)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for i in range(5):
        (repo / f"tracked{i}.txt").write_text(f"{i}\n")
    git(repo, "add", ".")
    git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init")
    mark = tmp_path / "marks"
    mark.mkdir()
    git(repo, "config", "filter.evil.clean", f"touch {mark}/clean; cat")
    git(repo, "config", "filter.x.y.process", f"touch {mark}/process")
    (repo / ".gitattributes").write_text("*.txt filter=evil\n*.md filter=x.y\n")
    for i in range(5):
        (repo / f"tracked{i}.txt").write_text("changed\n")
    for i in range(18):
        (repo / f"new {i}.txt").write_text("new\n")  # a space: status quotes nothing, but shows it
    (repo / "AGENTS.md").write_text("# Agents\n\n" + "x" * (MAX_INSTRUCTIONS_CHARS + 100) + "\n")
    (repo / "CLAUDE.md").write_bytes(b"# Claude\r\n\r\nUse tabs.\xff\r\n")
    (repo / "sub").mkdir()
    return repo


async def both(cwd: Path | str, additional: list[str]) -> str:
    """The prompt both ways, each way first, asserting they agree."""
    now = system_prompt_now(str(cwd), additional, today=TODAY)
    later = await system_prompt(str(cwd), additional, today=TODAY)
    assert now == later
    assert await system_prompt(str(cwd), additional, today=TODAY) == system_prompt_now(
        str(cwd), additional, today=TODAY
    )
    return now


async def test_a_repository_with_changes_drivers_and_instructions(repo: Path, tmp_path: Path) -> None:
    prompt = await both(repo, [str(tmp_path / "other"), "/somewhere else"])
    assert "branch main, 26 changed files:" in prompt  # 5 changed, 18 new, .gitattributes, AGENTS.md, CLAUDE.md
    assert "    ... and 6 more" in prompt
    assert f'<project-instructions file="{repo / "AGENTS.md"}">' in prompt
    size = len("# Agents\n\n") + MAX_INSTRUCTIONS_CHARS + 101
    assert f"x\n[AGENTS.md is cut here: only its first 20,000 characters of {size:,} bytes were read]\n</" in prompt
    assert "Use tabs.\ufffd\n</project-instructions>" in prompt
    assert "\r" not in prompt
    assert f"Other directories in scope: {tmp_path / 'other'}, /somewhere else" in prompt
    assert "Today's date: 2024-02-29" in prompt
    assert sorted(path.name for path in (tmp_path / "marks").iterdir()) == []  # no filter ran


async def test_a_subfolder_of_a_repository(repo: Path) -> None:
    prompt = await both(repo / "sub", [])
    assert "branch main, 26 changed files" in prompt
    assert "Instructions from the project (follow them unless the user says otherwise):\n(none)" in prompt
    assert "Other directories in scope: none" in prompt


async def test_a_clean_repository(tmp_path: Path) -> None:
    clean = tmp_path / "clean"
    clean.mkdir()
    git(clean, "init", "-q", "-b", "trunk")
    assert "Git: not a git repository" in await both(clean, [])  # no commit yet: rev-parse HEAD fails
    git(clean, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "init")
    assert "Git: branch trunk, clean working tree\n" in await both(clean, [])


async def test_a_folder_that_is_not_a_repository(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "AGENTS.md").write_text("Be nice.\n")
    prompt = await both(plain, [])
    assert "Git: not a git repository" in prompt
    assert "Be nice." in prompt


async def test_a_folder_that_does_not_exist(tmp_path: Path) -> None:
    assert "Git: not a git repository" in await both(tmp_path / "gone", [])


async def test_a_required_filter_makes_the_prompt_say_the_tree_could_not_be_looked_at(tmp_path: Path) -> None:
    """Before: git status failed, and the prompt said "clean working tree"."""
    repo = lay_out("required-filter", tmp_path)
    repo.change_tracked()
    prompt = await both(repo.project, [])
    why = "git status failed: a.txt: clean filter 'req' failed"
    assert f"Git: branch main, the working tree could not be looked at ({why})\n" in prompt
    assert "clean working tree" not in prompt
    assert repo.left() == []


def test_the_git_command_line_and_the_overrides_of_what_config_names() -> None:
    assert command_line("/w", ["status", "--porcelain"]) == [
        "git",
        *git_calls.NEUTRAL,
        "--work-tree=/w",
        "status",
        "--ignore-submodules=all",
        "--porcelain",
    ]
    assert command_line(None, ["show", "HEAD:a"]) == [
        "git",
        *git_calls.NEUTRAL,
        "show",
        "--no-ext-diff",
        "--no-textconv",
        "HEAD:a",
    ]
    keys = b"filter.lfs.clean\0filter.lfs.process\0filter.x=y.z.smudge\0protocol.ext.allow\0"
    assert overrides_of(keys) == [
        ("filter.lfs.clean", ""),
        ("filter.lfs.process", ""),
        ("filter.x=y.z.smudge", ""),
        ("protocol.ext.allow", "never"),
    ]
    assert overrides_of(b"") == []


def test_importing_it_imports_no_runtime() -> None:
    code = (
        "import sys, coder_agent.prestart.project_facts; "
        "print(sorted({'pydantic', 'anyio', 'asyncio', 'logging'} & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
