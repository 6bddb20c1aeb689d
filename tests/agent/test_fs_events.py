"""The inotify watch behind `Watch`: a look is reused only while no event came, every change is still seen, and a
root that cannot be watched is looked at every time (real files, real git, real inotify)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from coder_agent.agent.workspace import changes, fs_events
from coder_agent.agent.workspace.changes import Look, Watch, compare, look

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
def looks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The roots `changes.look` was called for (the real look runs)."""
    made: list[str] = []

    async def counted(root: str, top: str | None = None) -> Look:
        made.append(root)
        return await look(root, top)

    monkeypatch.setattr(changes, "look", counted)
    return made


def rel(path: str, root: Path) -> str:
    return os.path.relpath(path, root)


def queue_limit() -> int:
    return int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())


async def command(root: Path, script: str) -> list[tuple[str, str]]:
    """Run `script` as the agent runs a command: a watch before, what changed after."""
    watch = Watch([str(root)])
    await watch.start()
    if script:
        sh(root, script)
    return [(rel(seen.path, root), seen.kind) for _, seen in await watch.changes()]


@pytest.mark.parametrize("git", [True, False])
async def test_a_command_that_changes_nothing_costs_no_look(
    repo: Path, tmp_path: Path, looks: list[str], git: bool
) -> None:
    root = repo if git else tmp_path / "plain"
    if not git:
        sh(tmp_path, "mkdir plain && printf 'x\\n' > plain/x.txt")
    assert await command(root, "printf 'A\\n' > a.txt") == [("a.txt", "modified" if git else "created")]
    made = len(looks)
    assert await command(root, "cat a.txt > /dev/null; ls -R > /dev/null") == []
    assert await command(root, "") == []
    assert len(looks) == made  # every look reused: no event came
    assert await command(root, "printf 'B\\n' > a.txt") == [("a.txt", "modified")]
    # The look before was still good; after, git is asked again, and outside git the file alone is looked at
    assert len(looks) == made + (1 if git else 0)


async def test_a_users_edit_between_two_commands_is_not_taken_for_the_second_ones(repo: Path, looks: list[str]) -> None:
    assert await command(repo, "") == []
    sh(repo, "printf 'the user typed this\\n' > a.txt && rm b.txt")  # in the editor, between two commands
    made = len(looks)
    assert await command(repo, "printf 'new\\n' > c.txt") == [("c.txt", "created")]
    assert len(looks) == made + 2  # the look before was taken anew: there had been events


async def test_a_new_folder_is_watched_from_the_command_that_made_it(repo: Path) -> None:
    assert await command(repo, "mkdir -p new/deep && printf '1\\n' > new/deep/f.txt") == [("new/deep/f.txt", "created")]
    assert await command(repo, "printf '2\\n' > new/deep/f.txt") == [("new/deep/f.txt", "modified")]
    assert await command(repo, "mkdir new/deep/deeper && printf '3\\n' > new/deep/deeper/g.txt") == [
        ("new/deep/deeper/g.txt", "created")
    ]
    assert await command(repo, "printf '4\\n' >> new/deep/deeper/g.txt") == [("new/deep/deeper/g.txt", "modified")]


async def test_what_git_calls_clean_moving_is_an_event_the_watch_sees(repo: Path) -> None:
    # A commit changes no file in the work tree, only git's folder: the looks must still be taken again, and
    # the answer must be the one two full looks give.
    sh(repo, "printf 'dirty\\n' > a.txt")
    assert await command(repo, "") == []
    top = str(repo)
    plain_before = await look(top, top)
    watched = await command(repo, "git add a.txt && git -c user.email=t@t -c user.name=t commit -qm x")
    plain = compare(plain_before, await look(top, top))
    assert watched == [(rel(seen.path, repo), seen.kind) for seen in plain]
    sh(repo, "printf 'dirty again\\n' > a.txt")
    assert await command(repo, "git checkout -q -- a.txt") == [("a.txt", "modified")]


@pytest.mark.parametrize(
    "break_it",
    [
        pytest.param(lambda mp: mp.setattr(fs_events, "MAX_FOLDERS", 1), id="too-many-folders"),
        pytest.param(lambda mp: mp.setattr(fs_events, "_LOCAL", {}), id="file-system-not-trusted"),
    ],
)
async def test_a_root_that_cannot_be_watched_is_looked_at_every_time(
    repo: Path, looks: list[str], monkeypatch: pytest.MonkeyPatch, break_it: Callable[[pytest.MonkeyPatch], None]
) -> None:
    break_it(monkeypatch)
    assert await command(repo, "") == []
    assert await command(repo, "printf 'A\\n' > a.txt") == [("a.txt", "modified")]
    assert len(looks) == 4  # two looks a command
    assert fs_events.events(str(repo), str(repo)) is None


async def test_an_overflowing_event_queue_falls_back_to_looking_and_misses_nothing(
    repo: Path, looks: list[str]
) -> None:
    limit = queue_limit()
    if limit > 70_000:
        pytest.skip(f"the kernel queues {limit} events: too many files to make here")
    assert await command(repo, "") == []
    made = len(looks)
    # More events than the queue holds (in a watched folder), leaving the tree as it was
    flood = f"cd src && seq {limit + 100} | xargs touch && seq {limit + 100} | xargs rm"
    assert await command(repo, flood) == []
    assert len(looks) == made + 1  # the watch broke: the look after is taken anew
    assert await command(repo, "printf 'A\\n' > a.txt") == [("a.txt", "modified")]  # watched again, from scratch
    assert len(looks) == made + 3


# Commands outside git, each followed by the check that the watched look is what a whole new walk finds
STEPS = [
    "printf 'x\\n' > top.txt",
    "mkdir -p pkg/sub && printf '1\\n' > pkg/sub/m.py && printf 'log\\n' > pkg/debug.log",
    "printf '2\\n' >> pkg/sub/m.py && rm top.txt",
    "mkdir -p node_modules/lib && printf 'js\\n' > node_modules/lib/i.js",  # a folder the walk skips
    "printf 'more\\n' >> pkg/debug.log && printf 'kept\\n' > pkg/keep.log",  # ignored; re-included by `!`
    "printf 'pkg/sub/\\n' >> .gitignore",  # the ignore rules change: pkg/sub leaves the walk
    "printf '3\\n' >> pkg/sub/m.py && printf 'y\\n' > y.txt",
    "mv y.txt pkg/z.txt && ln -s pkg/z.txt link.txt && ln -s pkg linked",
    "rm -r pkg && touch -d '2001-01-01' a.txt",
    "",
]


async def test_outside_git_the_watched_look_is_always_what_a_new_walk_finds(tmp_path: Path, looks: list[str]) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    sh(root, "printf '*.log\\n!keep.log\\n' > .gitignore && printf 'a\\n' > a.txt")
    await command(root, "")
    for step in STEPS:
        watch = Watch([str(root)])
        await watch.start()
        sh(root, step)
        await watch.changes()
        watched = changes._last_looks[str(root)][0]
        assert watched.files == (await look(str(root))).files, step
    assert len(looks) < 2 * len(STEPS)  # most looks were the watched ones (the full walks here are not counted)


async def test_a_root_named_by_a_symlink_is_watched_and_symlinked_folders_in_it_are_not_followed(
    repo: Path, tmp_path: Path, looks: list[str]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    sh(repo, f"ln -s {outside} elsewhere && printf 'elsewhere\\n' >> .git/info/exclude")
    link = tmp_path / "link"
    link.symlink_to(repo)
    assert await command(link, "") == []
    made = len(looks)
    sh(outside, "printf 'not ours\\n' > o.txt")  # behind a symlinked folder: not watched, as not walked
    assert await command(link, "") == []
    assert len(looks) == made
    assert await command(link, "printf 'A\\n' > a.txt") == [("a.txt", "modified")]
    watch = Watch([str(link)])
    await watch.start()
    sh(link, "printf 'B\\n' > b.txt")
    [(seen_in, seen)] = await watch.changes()
    assert seen.path == str(link / "b.txt")  # named as the session names it
    assert (await changes.prior_content(seen_in, seen.path)).data == b"b\n"
