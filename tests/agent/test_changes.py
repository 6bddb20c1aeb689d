"""Seeing what a command changed: git's view in a work tree, a walk elsewhere; the content a file had before."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from coder_agent.agent.workspace.changes import Watch, prior_content

pytestmark = pytest.mark.anyio


def sh(cwd: Path, script: str) -> None:
    subprocess.run(["/bin/sh", "-c", script], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    sh(root, "git init -q && printf 'a\\n' > a.txt && printf 'b\\n' > b.txt && printf 'x\\n' > keep.txt")
    sh(root, "printf 'dist/\\n*.log\\n' > .gitignore && mkdir dist && printf 'built\\n' > dist/out.js")
    sh(root, "git add -A && git -c user.email=t@t -c user.name=t commit -qm init")
    sh(root, "printf 'dirty before\\n' > keep.txt")  # already changed before the command: not its doing
    return root


def summary(found: list[tuple[object, object]]) -> list[tuple[str, str, bool]]:
    return [(os.path.basename(s.path), s.kind, s.prior_in_git) for _, s in found]  # type: ignore[attr-defined]


async def test_a_command_that_edits_creates_and_deletes_is_seen_in_a_git_work_tree(repo: Path) -> None:
    watch = Watch([str(repo)])
    await watch.start()
    sh(repo, "sed -i 's/a/A/' a.txt && rm b.txt && printf 'new\\n' > c.txt && printf 'x\\n' > debug.log")
    sh(repo, "printf 'rebuilt\\n' > dist/out.js")  # ignored: not reported
    found = await watch.changes()
    assert summary(found) == [("a.txt", "modified", True), ("b.txt", "deleted", True), ("c.txt", "created", False)]
    look, seen = found[0]
    assert (await prior_content(look, seen.path)).data == b"a\n"  # type: ignore[arg-type, attr-defined]


async def test_the_prior_content_survives_a_command_that_stages_and_commits_its_change(repo: Path) -> None:
    watch = Watch([str(repo)])
    await watch.start()
    sh(repo, "printf 'changed\\n' > a.txt && git add a.txt && git -c user.email=t@t -c user.name=t commit -qm x")
    [(look, seen)] = await watch.changes()
    assert (os.path.basename(seen.path), seen.kind) == ("a.txt", "modified")
    assert (await prior_content(look, seen.path)).data == b"a\n"


async def test_a_file_already_dirty_is_reported_when_the_command_changes_it_again(repo: Path) -> None:
    watch = Watch([str(repo)])
    await watch.start()
    sh(repo, "sleep 0.01; printf 'dirty, then more\\n' > keep.txt")
    [(_, seen)] = await watch.changes()
    assert (os.path.basename(seen.path), seen.kind, seen.prior_in_git) == ("keep.txt", "modified", False)


async def test_outside_git_the_walk_sees_changes_and_honours_gitignore(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    sh(root, "printf 'a\\n' > a.txt && printf '*.tmp\\n' > .gitignore")
    watch = Watch([str(root)])
    await watch.start()
    sh(root, "sleep 0.01; printf 'A\\n' > a.txt && printf 'n\\n' > n.txt && printf 't\\n' > x.tmp")
    found = await watch.changes()
    assert summary(found) == [("a.txt", "modified", False), ("n.txt", "created", False)]


async def test_a_hostile_checkout_runs_nothing_while_it_is_watched(repo: Path, tmp_path: Path) -> None:
    mark = tmp_path / "ran"
    sh(repo, f"git config core.fsmonitor 'touch {mark}; false' && git config filter.evil.clean 'touch {mark}; cat'")
    sh(repo, "printf '*.txt filter=evil\\n' >> .gitattributes")
    watch = Watch([str(repo)])
    await watch.start()
    sh(repo, "printf 'z\\n' > a.txt")
    await watch.changes()
    assert not mark.exists()
