"""The agent's own git calls run nothing a checkout configures (fsmonitor hooks, filters, diff drivers, a lazy
fetch's transport), however its config changes during the session, and look at no folder but the project.
The hostile repositories are `tests/fixtures/hostile_git/` (README.md there says what each must do)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from coder_agent.agent.commands.builtin import uncommitted_changes
from coder_agent.agent.workspace.changes import Watch, content_of
from coder_agent.agent.workspace.environment import git_summary
from coder_agent.agent.workspace.git import git_answer, git_output
from coder_agent.agent.workspace.ignore import python_listing
from coder_agent.agent.workspace.listing import list_files
from coder_agent.prestart.git_calls import KEYS_QUERY, GitAnswer, command_line, git_environment, overrides_of, run_now
from coder_agent.prestart.project_facts import git_summary_now
from tests.support.hostile_git import git, lay_out

pytestmark = pytest.mark.anyio


def plain_status(cwd: Path, *args: str) -> str:
    """What the user's own git prints (`git status` unless told), running whatever the checkout names."""
    command = ["git", *(args or ("status", "--porcelain"))]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False).stdout


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """A checkout whose .git/config and .gitattributes name commands that leave a mark when run."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-qm", "init")
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
    listing = await list_files(str(hostile))  # on rg, which runs no git at all
    assert listing.source == "rg" and "a.txt" in listing.files
    listing = await python_listing(str(hostile))  # without rg: git
    assert listing.source == "git" and "a.txt" in listing.files
    assert marks(hostile) == []


# --- the cases of tests/fixtures/hostile_git


async def test_a_filter_an_edit_adds_to_an_included_file_never_runs(tmp_path: Path) -> None:
    """The issue's run: the first call saw no filter; the model's edit of a file `.git/config` includes adds
    one. Every later call, async and blocking, looks again (before: a cache watching `.git/config` alone)."""
    repo = lay_out("include-in-project", tmp_path)
    assert "branch main, clean working tree" in await git_summary(str(repo.project))
    repo.edit()
    repo.change_tracked()
    assert " M a.txt" in await git_summary(str(repo.project))
    assert " M a.txt" in git_summary_now(str(repo.project))
    assert await git_output(str(repo.project), "diff", "HEAD") is not None
    assert repo.left() == []
    plain_status(repo.project)
    assert repo.left() == ["include"]  # the case is really hostile: the user's own git runs it


async def test_a_filter_included_once_the_branch_changes_never_runs(tmp_path: Path) -> None:
    repo = lay_out("include-on-branch", tmp_path)
    assert "branch side, clean working tree" in git_summary_now(str(repo.project))
    git(repo.project, "symbolic-ref", "HEAD", "refs/heads/main")  # `includeIf "onbranch:main"` now holds
    repo.change_tracked()
    assert " M a.txt" in git_summary_now(str(repo.project))
    assert " M a.txt" in await git_summary(str(repo.project))
    assert repo.left() == []
    plain_status(repo.project)
    assert repo.left() == ["onbranch"]


async def test_a_filter_whose_name_holds_an_equals_sign_never_runs(tmp_path: Path) -> None:
    """`-c filter.x=y.clean=` is split at the first `=`, so it emptied nothing (before); the environment's
    config keys and values are apart."""
    repo = lay_out("equals-in-driver-name", tmp_path)
    repo.change_tracked()
    assert " M a.txt" in await git_summary(str(repo.project))
    assert repo.left() == []
    plain_status(repo.project)
    assert repo.left() == ["equals"]


async def test_a_core_worktree_elsewhere_is_not_followed(tmp_path: Path) -> None:
    """The work tree is the folder that holds `.git`: the agent never lists the home folder's files."""
    repo = lay_out("worktree-elsewhere", tmp_path)
    assert "secret.txt" in plain_status(repo.project)  # the user's own git would look at the home folder
    summary = await git_summary(str(repo.project))
    assert summary == git_summary_now(str(repo.project))
    assert "secret" not in summary and "clean working tree" in summary
    top = await git_output(str(repo.project), "rev-parse", "--show-toplevel")
    assert top is not None and top.decode().strip() == str(repo.project)
    for listing in (await list_files(str(repo.project)), await python_listing(str(repo.project))):
        assert listing.files == ["a.txt"]
    watch = Watch([str(repo.project)], tmp_path / "data")
    await watch.start()
    (repo.home / "secret.txt").write_text("changed by someone\n")
    (repo.project / "a.txt").write_text("new\n")
    assert [seen.path for seen in await watch.changes()] == [str(repo.project / "a.txt")]


async def test_a_folder_of_the_checkout_laid_out_as_a_bare_repository_is_not_one(tmp_path: Path) -> None:
    repo = lay_out("embedded-bare-repo", tmp_path)
    sub = repo.project / "sub"
    assert "secret.txt" in plain_status(sub)  # plain git takes sub/ for a repository whose work tree is home
    assert await git_summary(str(sub)) == git_summary_now(str(sub)) == "not a git repository"
    for listing in (await list_files(str(sub)), await python_listing(str(sub))):
        assert "secret.txt" not in listing.files


async def test_diff_drivers_programs_never_run(tmp_path: Path) -> None:
    """/review's diff and a changed file's earlier content: no textconv, no external diff, whoever asks."""
    repo = lay_out("diff-programs", tmp_path)
    repo.change_tracked()
    review = await uncommitted_changes(str(repo.project))
    assert "-alpha\n+ALPHA" in review
    assert await git_output(str(repo.project), "diff", "HEAD") is not None  # no caller's flags needed
    assert await git_output(str(repo.project), "show", "HEAD:a.txt") == b"alpha\nbeta\n"
    assert repo.left() == []
    git(repo.project, "diff", "HEAD")
    assert repo.left() == ["diff-command"]  # the case is really hostile (the driver's command wins)


async def test_a_missing_object_is_never_fetched_through_the_configs_transport(tmp_path: Path) -> None:
    repo = lay_out("lazy-fetch", tmp_path)
    answer = await git_answer(str(repo.project), "show", "HEAD~:a.txt")
    assert answer == GitAnswer(None, f"could not fetch {missing_blob(repo.project)} from promisor remote")
    assert run_now(str(repo.project), ("show", "HEAD~:a.txt")) == answer
    watch = Watch([str(repo.project)], tmp_path / "data")  # the snapshot reads the files, not the repository
    await watch.start()
    repo.change_tracked()
    [seen] = await watch.changes()
    blobs = await watch.contents(str(repo.project), [seen.before], 1024, 1024)
    assert content_of(seen.before, blobs, "").data == b"alpha\nbeta\n"
    assert repo.left() == []
    plain_status(repo.project, "show", "HEAD~:a.txt")
    assert repo.left() == ["lazy-fetch"]


def test_without_git_no_lazy_fetch_every_transport_is_refused(tmp_path: Path) -> None:
    """git before 2.39.4 ignores GIT_NO_LAZY_FETCH: the call's config refuses the transport all the same."""
    repo = lay_out("lazy-fetch", tmp_path)
    found = subprocess.run(
        command_line(str(repo.project), KEYS_QUERY), cwd=repo.project, capture_output=True, check=True
    ).stdout
    assert ("protocol.ext.allow", "never") in overrides_of(found)
    environment = git_environment(overrides_of(found))
    del environment["GIT_NO_LAZY_FETCH"]
    command = command_line(str(repo.project), ("show", "HEAD~:a.txt"))
    done = subprocess.run(command, cwd=repo.project, env=environment, capture_output=True, text=True)
    assert done.returncode != 0 and "transport 'ext' not allowed" in done.stderr
    assert repo.left() == []


def missing_blob(project: Path) -> str:
    listed = subprocess.run(
        ["git", "rev-list", "--objects", "--missing=print", "HEAD~"], cwd=project, capture_output=True, text=True
    ).stdout
    [missing] = [line[1:] for line in listed.splitlines() if line.startswith("?")]
    return missing


async def test_a_required_filter_is_said_to_have_failed_and_never_runs(tmp_path: Path) -> None:
    """Before: status failed silently and the prompt said "clean working tree". What a command changed is seen
    all the same: the snapshots never ask the checkout's git."""
    repo = lay_out("required-filter", tmp_path)
    repo.change_tracked()
    summary = await git_summary(str(repo.project))
    assert summary == git_summary_now(str(repo.project))
    assert summary == (
        "branch main, the working tree could not be looked at (git status failed: a.txt: clean filter 'req' failed)"
    )
    watch = Watch([str(repo.project)], tmp_path / "data")
    await watch.start()
    (repo.project / "b.txt").write_text("new\n")
    assert [seen.path for seen in await watch.changes()] == [str(repo.project / "b.txt")]
    assert watch.problems == {}
    assert repo.left() == []


def test_a_git_call_that_takes_too_long_is_cut_off_and_says_so(tmp_path: Path) -> None:
    """A config can name a pipe nobody writes to as a file git reads: the call ends at its deadline."""
    repo = lay_out("worktree-elsewhere", tmp_path)
    os.mkfifo(tmp_path / "pipe")
    git(repo.project, "config", "core.excludesFile", str(tmp_path / "pipe"))
    started = time.monotonic()
    answer = run_now(str(repo.project), ("status", "--porcelain"), timeout=0.5)
    assert answer.output is None and answer.error == "git status took longer than 0.5 s"
    assert time.monotonic() - started < 3


async def test_the_same_deadline_holds_on_the_event_loop(tmp_path: Path) -> None:
    repo = lay_out("worktree-elsewhere", tmp_path)
    os.mkfifo(tmp_path / "pipe")
    git(repo.project, "config", "core.excludesFile", str(tmp_path / "pipe"))
    answer = await git_answer(str(repo.project), "status", "--porcelain", timeout=0.5)
    assert answer.error == "git status took longer than 0.5 s"
