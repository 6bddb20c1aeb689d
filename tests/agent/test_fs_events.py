"""The inotify watch behind snapshots: a snapshot is reused only while no event came, events name what to look at
again, every change is still seen, and a root that cannot be watched is looked at every time (real files, real
git, real inotify)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from coder_agent.agent.workspace import fs_events, snapshots
from coder_agent.agent.workspace.changes import Watch
from coder_agent.agent.workspace.snapshot_diff import read_blobs

pytestmark = pytest.mark.anyio


def sh(cwd: Path, script: str) -> None:
    subprocess.run(["/bin/sh", "-c", script], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    sh(
        root,
        "git init -q && printf 'a\\n' > a.txt && printf 'b\\n' > b.txt && mkdir -p src && printf 's\\n' > src/s.py",
    )
    sh(root, "git add -A && git -c user.email=t@t -c user.name=t commit -qm init")
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def passes() -> int:
    return sum(snapshots.PASSES.values())


def rel(path: str, root: Path) -> str:
    return os.path.relpath(path, root)


def queue_limit() -> int:
    return int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())


async def command(root: Path, home: Path, script: str) -> list[tuple[str, str]]:
    """Run `script` as the agent runs a command: a snapshot before, what changed after."""
    watch = Watch([str(root)], home)
    await watch.start()
    if script:
        sh(root, script)
    return [(rel(seen.path, root), seen.kind) for seen in await watch.changes()]


@pytest.mark.parametrize("git", [True, False])
async def test_a_command_that_changes_nothing_costs_no_pass(repo: Path, tmp_path: Path, home: Path, git: bool) -> None:
    root = repo if git else tmp_path / "plain"
    if not git:
        sh(tmp_path, "mkdir plain && printf 'x\\n' > plain/a.txt")
    assert await command(root, home, "printf 'A\\n' > a.txt") == [("a.txt", "modified")]
    made = passes()
    assert await command(root, home, "cat a.txt > /dev/null; ls -R > /dev/null") == []
    assert await command(root, home, "") == []
    assert passes() == made  # every snapshot reused: no event came
    assert await command(root, home, "printf 'B\\n' > a.txt") == [("a.txt", "modified")]
    assert passes() == made + 1  # the snapshot before was still good; after, the one file named is looked at


async def test_a_users_edit_between_two_commands_is_not_taken_for_the_second_ones(repo: Path, home: Path) -> None:
    assert await command(repo, home, "") == []
    sh(repo, "printf 'the user typed this\\n' > a.txt && rm b.txt")  # in the editor, between two commands
    made = passes()
    assert await command(repo, home, "printf 'new\\n' > c.txt") == [("c.txt", "created")]
    assert passes() == made + 2  # the snapshot before was taken anew: there had been events


async def test_a_new_folder_is_watched_from_the_command_that_made_it(repo: Path, home: Path) -> None:
    made = "mkdir -p new/deep && printf '1\\n' > new/deep/f.txt"
    assert await command(repo, home, made) == [("new/deep/f.txt", "created")]
    assert await command(repo, home, "printf '2\\n' > new/deep/f.txt") == [("new/deep/f.txt", "modified")]
    assert await command(repo, home, "mkdir new/deep/deeper && printf '3\\n' > new/deep/deeper/g.txt") == [
        ("new/deep/deeper/g.txt", "created")
    ]
    assert await command(repo, home, "mv new moved") == [
        ("moved/deep/deeper/g.txt", "created"),
        ("moved/deep/f.txt", "created"),
        ("new/deep/deeper/g.txt", "deleted"),
        ("new/deep/f.txt", "deleted"),
    ]
    assert await command(repo, home, "printf '4\\n' >> moved/deep/deeper/g.txt") == [
        ("moved/deep/deeper/g.txt", "modified")
    ]


async def test_what_a_command_does_in_git_alone_changes_no_file(repo: Path, home: Path) -> None:
    sh(repo, "printf 'dirty\\n' > a.txt")
    assert await command(repo, home, "") == []
    assert await command(repo, home, "git add a.txt && git -c user.email=t@t -c user.name=t commit -qm x") == []
    assert await command(repo, home, "git checkout -q HEAD~1 -- a.txt") == [("a.txt", "modified")]


@pytest.mark.parametrize(
    "break_it",
    [
        pytest.param(lambda mp: mp.setattr(fs_events, "MAX_FOLDERS", 1), id="too-many-folders"),
        pytest.param(lambda mp: mp.setattr(fs_events, "_LOCAL", {}), id="file-system-not-trusted"),
    ],
)
async def test_a_root_that_cannot_be_watched_is_looked_at_every_time_and_misses_nothing(
    repo: Path, home: Path, monkeypatch: pytest.MonkeyPatch, break_it: Callable[[pytest.MonkeyPatch], None]
) -> None:
    break_it(monkeypatch)
    assert await command(repo, home, "") == []
    made = passes()
    assert await command(repo, home, "printf 'A\\n' > a.txt && chmod 600 b.txt && rm src/s.py") == [
        ("a.txt", "modified"),
        ("b.txt", "modified"),
        ("src/s.py", "deleted"),
    ]
    assert passes() == made + 2  # git asked what changed, before and after
    assert fs_events.events(str(repo)) is None


async def test_an_overflowing_event_queue_falls_back_to_looking_and_misses_nothing(repo: Path, home: Path) -> None:
    limit = queue_limit()
    if limit > 70_000:
        pytest.skip(f"the kernel queues {limit} events: too many files to make here")
    assert await command(repo, home, "") == []
    made = passes()
    # More events than the queue holds (in a watched folder), leaving the tree as it was
    flood = f"cd src && seq {limit + 100} | xargs touch && seq {limit + 100} | xargs rm"
    assert await command(repo, home, flood) == []
    assert passes() == made + 1  # the watch broke: the snapshot after is taken anew
    assert await command(repo, home, "printf 'A\\n' > a.txt") == [("a.txt", "modified")]  # watched again


# Commands, each followed by the check that the watched snapshot is what a snapshot from scratch finds
STEPS = [
    "printf 'x\\n' > top.txt",
    "mkdir -p pkg/sub && printf '1\\n' > pkg/sub/m.py && printf 'log\\n' > pkg/debug.log",
    "printf '2\\n' >> pkg/sub/m.py && rm top.txt && chmod 600 a.txt",
    "mkdir -p node_modules/lib && printf 'js\\n' > node_modules/lib/i.js",  # a folder the walk never entered
    "printf 'more\\n' >> pkg/debug.log && printf 'kept\\n' > pkg/keep.log",  # ignored; re-included by `!`
    "printf 'pkg/sub/\\n' >> .gitignore",  # the ignore rules change: pkg/sub leaves the snapshot
    "printf '3\\n' >> pkg/sub/m.py && printf 'y\\n' > y.txt && chmod 644 a.txt",
    "mv y.txt pkg/z.txt && ln -s pkg/z.txt link.txt && ln -s pkg linked",
    "mkdir -p repo2 && cd repo2 && git init -q && printf 'r\\n' > r.txt",  # a repository of its own
    "rm -r pkg && touch -d '2001-01-01' a.txt && rm -rf repo2/.git",
    "",
]


@pytest.mark.parametrize("git", [True, False])
async def test_the_watched_snapshot_is_always_what_a_snapshot_from_scratch_finds(
    tmp_path: Path, home: Path, git: bool
) -> None:
    root = tmp_path / "tree"
    root.mkdir()
    sh(root, "printf '*.log\\n!keep.log\\n' > .gitignore && printf 'a\\n' > a.txt" + (" && git init -q" * git))
    complete = snapshots.PASSES["complete"]
    await command(root, home, "")
    for number, step in enumerate(STEPS):
        watch = Watch([str(root)], home)
        await watch.start()
        sh(root, step)
        await watch.changes()
        watched = watch.after[str(root)]
        fresh = await anyio.to_thread.run_sync(snapshots.snapshot, tmp_path / f"fresh{number}", str(root))
        assert (watched.tree, watched.modes, watched.big) == (fresh.tree, fresh.modes, fresh.big), step
    # From scratch: the first, and where a `.gitignore` or a `.git` changed; the others only looked at what changed
    assert snapshots.PASSES["complete"] - complete - len(STEPS) <= 4


async def test_a_root_named_by_a_symlink_is_watched_and_symlinked_folders_in_it_are_not_followed(
    repo: Path, tmp_path: Path, home: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    sh(repo, f"ln -s {outside} elsewhere")
    link = tmp_path / "link"
    link.symlink_to(repo)
    assert await command(link, home, "") == []
    made = passes()
    sh(outside, "printf 'not ours\\n' > o.txt")  # behind a symlinked folder: not watched, not kept
    assert await command(link, home, "") == []
    assert passes() == made
    assert await command(link, home, "printf 'A\\n' > a.txt") == [("a.txt", "modified")]
    watch = Watch([str(link)], home)
    await watch.start()
    sh(link, "printf 'B\\n' > b.txt")
    [seen] = await watch.changes()
    assert seen.path == str(link / "b.txt")  # named as the session names it
    repo_of = snapshots.repo_of(home, str(link))
    assert seen.before.oid is not None
    assert (await anyio.to_thread.run_sync(read_blobs, repo_of, [seen.before.oid], 100)) == {seen.before.oid: b"b\n"}
