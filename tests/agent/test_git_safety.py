"""The agent's own git calls run nothing a checkout configures (fsmonitor hooks, clean/process filters)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from coder_agent.agent.environment import git_summary
from coder_agent.agent.ignore import list_files

pytestmark = pytest.mark.anyio


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """A checkout whose .git/config and .gitattributes name commands that leave a mark when run."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "a.txt")
    git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init")
    mark = tmp_path / "marks"
    mark.mkdir()
    git(repo, "config", "core.fsmonitor", f"touch {mark}/fsmonitor; false")
    git(repo, "config", "filter.evil.clean", f"touch {mark}/clean; cat")
    git(repo, "config", "filter.evil.process", f"touch {mark}/process")
    git(repo, "config", "filter.x.y.clean", f"touch {mark}/dotted; cat")
    (repo / ".gitattributes").write_text("*.txt filter=evil\n*.md filter=x.y\n")
    (repo / "a.txt").write_text("changed\n")  # status must look at its content
    (repo / "b.md").write_text("new\n")
    return repo


def marks(repo: Path) -> list[str]:
    return sorted(path.name for path in (repo.parent / "marks").iterdir())


def test_plain_git_status_would_run_them(hostile: Path) -> None:
    """The fixture is really hostile: git on its own runs the project's commands."""
    subprocess.run(["git", "status", "--porcelain"], cwd=hostile, capture_output=True, check=False)
    assert marks(hostile)


async def test_the_session_summary_runs_none_of_them(hostile: Path) -> None:
    summary = await git_summary(str(hostile))
    assert "a.txt" in summary
    assert marks(hostile) == []


async def test_listing_files_for_search_runs_none_of_them(hostile: Path) -> None:
    listing = await list_files(str(hostile))
    assert listing.source == "git" and "a.txt" in listing.files
    assert marks(hostile) == []
