"""Seeing what a command changed: one snapshot before it and one after, in a repository or not, and what each
changed file held before (from the snapshot, tracked by git or not), with its mode."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from coder_agent.agent.workspace.changes import Seen, Watch, content_of
from coder_agent.agent.workspace.snapshot_pass import MAX_FILE_BYTES

pytestmark = pytest.mark.anyio


def sh(cwd: Path, script: str) -> None:
    subprocess.run(["/bin/sh", "-c", script], cwd=cwd, check=True, capture_output=True)


def commit(root: Path) -> None:
    sh(root, "git add -A && git -c user.email=t@t -c user.name=t commit -qm init")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    sh(root, "git init -q && printf 'a\\n' > a.txt && printf 'b\\n' > b.txt && printf 'x\\n' > keep.txt")
    sh(root, "printf 'dist/\\n*.log\\n' > .gitignore && mkdir dist && printf 'built\\n' > dist/out.js")
    commit(root)
    sh(root, "printf 'dirty before\\n' > keep.txt")  # already changed before the command: not its doing
    return root


def stored(home: Path) -> int:
    """Bytes the data folder holds."""
    return sum(path.stat().st_size for path in home.rglob("*") if path.is_file())


def summary(found: list[Seen]) -> list[tuple[str, str]]:
    return [(os.path.basename(seen.path), seen.kind) for seen in found]


async def before_of(watch: Watch, seen: Seen) -> bytes | None:
    blobs = await watch.contents(seen.root, [seen.before], MAX_FILE_BYTES, MAX_FILE_BYTES)
    return content_of(seen.before, blobs, "too large").data


async def around(root: Path, home: Path, command: str) -> tuple[Watch, list[Seen]]:
    watch = Watch([str(root)], home)
    await watch.start()
    sh(root, command)
    return watch, await watch.changes()


async def test_a_command_that_edits_creates_and_deletes_is_seen_in_a_git_work_tree(repo: Path, home: Path) -> None:
    command = "sed -i 's/a/A/' a.txt && rm b.txt && printf 'new\\n' > c.txt && printf 'x\\n' > debug.log"
    watch, found = await around(repo, home, command + " && printf 'rebuilt\\n' > dist/out.js")  # ignored
    assert summary(found) == [("a.txt", "modified"), ("b.txt", "deleted"), ("c.txt", "created")]
    assert [await before_of(watch, seen) for seen in found] == [b"a\n", b"b\n", None]


async def test_the_prior_content_survives_a_command_that_stages_and_commits_its_change(repo: Path, home: Path) -> None:
    command = "printf 'changed\\n' > a.txt && git add a.txt && git -c user.email=t@t -c user.name=t commit -qm x"
    watch, [seen] = await around(repo, home, command)
    assert (os.path.basename(seen.path), seen.kind) == ("a.txt", "modified")
    assert await before_of(watch, seen) == b"a\n"


async def test_a_file_already_dirty_is_seen_with_what_it_held_just_before_the_command(repo: Path, home: Path) -> None:
    watch, [seen] = await around(repo, home, "printf 'dirty, then more\\n' > keep.txt")
    assert (os.path.basename(seen.path), seen.kind) == ("keep.txt", "modified")
    assert await before_of(watch, seen) == b"dirty before\n"


@pytest.mark.parametrize("kind", ["no repository", "no commit yet"])
async def test_untracked_files_and_folders_outside_git_are_known_as_well(tmp_path: Path, home: Path, kind: str) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    sh(root, "printf 'alpha\\n' > notes.txt && printf '*.tmp\\n' > .gitignore && mkdir -p deep/er")
    sh(root, "printf 'deep\\n' > deep/er/x.txt" + (" && git init -q" if kind == "no commit yet" else ""))
    command = "sed -i s/alpha/ALPHA/ notes.txt && printf 'new\\n' > made.txt && printf 't\\n' > x.tmp && rm -r deep"
    watch, found = await around(root, home, command)
    assert summary(found) == [("x.txt", "deleted"), ("made.txt", "created"), ("notes.txt", "modified")]
    assert [await before_of(watch, seen) for seen in found] == [b"deep\n", None, b"alpha\n"]


async def test_modes_git_cannot_keep_are_kept_beside_it_and_a_mode_change_alone_is_a_change(
    tmp_path: Path, home: Path
) -> None:
    root = tmp_path / "modes"
    root.mkdir()
    sh(root, "printf 's\\n' > secret && chmod 600 secret && printf '#!/bin/sh\\n' > run.sh && chmod 755 run.sh")
    sh(root, "printf 'x\\n' > plain.txt")
    watch, found = await around(root, home, "rm secret && chmod 644 run.sh && chmod 640 plain.txt")
    sides = {os.path.basename(seen.path): (seen.kind, seen.before.mode, seen.after.mode) for seen in found}
    assert sides == {
        "secret": ("deleted", 0o600, None),
        "run.sh": ("modified", 0o755, 0o644),
        "plain.txt": ("modified", 0o644, 0o640),
    }
    assert await before_of(watch, found[2] if found[2].path.endswith("secret") else found[1]) == b"s\n"


async def test_a_file_past_the_cap_is_never_hashed_only_said_to_change(tmp_path: Path, home: Path) -> None:
    root = tmp_path / "big"
    root.mkdir()
    sh(root, f"truncate -s {MAX_FILE_BYTES + 1} disk.img && printf 'x\\n' > small.txt")
    watch = Watch([str(root)], home)
    await watch.start()
    store_before = stored(home)
    sh(root, f"truncate -s {2 * MAX_FILE_BYTES} disk.img")
    [seen] = await watch.changes()
    assert (seen.kind, seen.before.state, seen.before.size, seen.after.size) == (
        "modified",
        "big",
        MAX_FILE_BYTES + 1,
        2 * MAX_FILE_BYTES,
    )
    assert stored(home) < store_before + 64 * 1024


async def test_a_nested_repository_and_the_users_git_folder_are_never_kept_nor_written(repo: Path, home: Path) -> None:
    sh(repo, "mkdir inner && cd inner && git init -q && printf 'i\\n' > i.txt")  # no commit: `git add -A` fails
    listing = sorted((path, path.stat().st_mtime_ns) for path in (repo / ".git").rglob("*"))
    _, found = await around(repo, home, "printf 'A\\n' > a.txt && printf 'I\\n' > inner/i.txt")
    assert summary(found) == [("a.txt", "modified")]
    assert sorted((path, path.stat().st_mtime_ns) for path in (repo / ".git").rglob("*")) == listing


async def test_a_file_the_project_tracks_although_ignored_is_kept_too(repo: Path, home: Path) -> None:
    sh(
        repo,
        "printf 'forced\\n' > dist/kept.js && git add -f dist/kept.js && git -c user.email=t@t -c user.name=t "
        "commit -qm forced",
    )
    watch, found = await around(repo, home, "printf 'changed\\n' > dist/kept.js && printf 'y\\n' > dist/out.js")
    assert summary(found) == [("kept.js", "modified")]
    assert await before_of(watch, found[0]) == b"forced\n"


async def test_a_hostile_checkout_runs_nothing_and_its_attributes_change_no_byte(repo: Path, tmp_path: Path) -> None:
    home, mark = tmp_path / "home", tmp_path / "ran"
    sh(repo, f"git config core.fsmonitor 'touch {mark}; false' && git config filter.evil.clean 'touch {mark}; cat'")
    sh(repo, "printf '*.txt filter=evil text eol=crlf working-tree-encoding=UTF-16 ident\\n' >> .gitattributes")
    sh(repo, "printf 'one\\r\\ntwo $Id$\\n' > a.txt")
    watch, found = await around(repo, home, "printf 'z\\n' > a.txt")
    assert not mark.exists()
    [seen] = [seen for seen in found if seen.path.endswith("a.txt")]
    assert await before_of(watch, seen) == b"one\r\ntwo $Id$\n"


async def test_the_snapshots_are_private(repo: Path, home: Path) -> None:
    await around(repo, home, "printf 'z\\n' > a.txt")
    for path in (home / "snapshots").rglob("*"):
        assert stat.S_IMODE(path.lstat().st_mode) & 0o077 == 0, path
