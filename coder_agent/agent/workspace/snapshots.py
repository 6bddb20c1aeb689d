"""Snapshots of a root: every file its `.gitignore` files do not hide, tracked or not, in a repository or not,
kept in the root's shadow repository (`shadow_repo.py`) as one git tree, with what git cannot keep beside it.

A snapshot is a pass over the root that brings the shadow's index up to date and writes its tree. git's own
index is the stat cache: a file whose size, times and inode did not change is not read again, and only files
that did are hashed. Which files to look at comes from the inotify watch of the root (`fs_events.py`) when it
can be trusted: no event since the last snapshot, no pass at all; events, a pass over the paths they name;
otherwise (the first pass of this process, a `.gitignore` changed, no watch) git lists what changed itself.

What a git tree cannot hold is kept beside it, for the paths where it matters: exact modes where they are not
those most of the tree's plain and executable files have (644 and 755, or 664 and 775 under a umask of 002: a
600 secret, a 700 script), the files past `MAX_FILE_BYTES` (never hashed: their size and time stand for them),
the files that could not be read. Folders that are repositories of their own are not added (their own git keeps
them); neither are pipes, sockets and devices. Blocking: run it in a worker thread.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from . import fs_events
from .ignore import DEFAULT_SKIP
from .shadow_repo import ShadowError, ShadowRepo, shadow_folder, top_of
from .snapshot_pass import Pass, Snapshot, State

log = logging.getLogger(__name__)

MAX_NAMED = 2_000  # paths named by events; past this, git is asked what changed instead
MAX_ROOTS = 64  # roots this process remembers the last snapshot of
RETRY_AFTER = 60.0  # seconds a root whose pass failed is not passed over again


@dataclass(frozen=True)
class Side:
    """One file in one snapshot."""

    state: State
    oid: str | None = None  # the blob (a file's bytes, a link's target)
    mode: int | None = None  # a file's permission bits
    size: int | None = None  # a file past the cap
    stamp: int | None = None  # its modification time (ns): what says it changed
    why: str = ""  # a file that could not be read


ABSENT_SIDE = Side("absent")


@dataclass(frozen=True)
class Difference:
    rel: str
    before: Side
    after: Side


class _Root:
    """What this process knows of one root's shadow: its last snapshot, and the watch events it had seen."""

    def __init__(self, repo: ShadowRepo) -> None:
        self.lock = threading.Lock()
        self.repo = repo
        self.last: Snapshot | None = None
        self.watched: fs_events.RootEvents | None = None
        self.generation = -1
        self.failed: tuple[float, str] | None = None  # when and why the last pass failed


_roots: dict[tuple[Path, str], _Root] = {}
_registry = threading.Lock()
PASSES: Counter[str] = Counter()  # passes made by kind, for the benchmark and the tests (a reuse is none)


def excluded(home: Path, root_real: str, top: str) -> list[str]:
    """Patterns the shadow ignores beyond the tree's own: outside git, the folders the walk never entered
    (`ignore.DEFAULT_SKIP`); and the agent's data folder, where it lies inside the tree."""
    patterns = [] if os.path.isdir(os.path.join(top, ".git")) else [f"{name}/" for name in sorted(DEFAULT_SKIP)]
    home_real = os.path.realpath(home)
    if home_real.startswith(top.rstrip(os.sep) + os.sep):
        patterns.append("/" + os.path.relpath(home_real, top).replace(os.sep, "/") + "/")
    return patterns


def _root_state(home: Path, root: str) -> _Root:
    real = os.path.realpath(root)
    with _registry:
        state = _roots.get((home, root))
        top = top_of(real)
        if state is None or state.repo.top != top or state.repo.root != real:
            repo = ShadowRepo(shadow_folder(home, real), real, top, excluded(home, real, top))
            state = _roots[(home, root)] = _Root(repo)
            while len(_roots) > MAX_ROOTS:  # the oldest is let go (its next snapshot is a pass from scratch)
                _roots.pop(next(iter(_roots)))
        return state


def repo_of(home: Path, root: str) -> ShadowRepo:
    return _root_state(home, root).repo


def snapshot(home: Path, root: str) -> Snapshot:
    """The root's files now: the last snapshot when the watch saw nothing since, else a pass. Raises
    `ShadowError` (git failed, the root is too large); blocking."""
    state = _root_state(home, root)
    with state.lock:
        if state.failed is not None and time.monotonic() - state.failed[0] < RETRY_AFTER:
            raise ShadowError(state.failed[1])  # not again at every command: a tree too large stays so
        try:
            taken = _taken(state, root)
        except ShadowError as exc:
            state.failed = (time.monotonic(), str(exc))
            raise
        state.failed = None
        return taken


def _taken(state: _Root, root: str) -> Snapshot:
    """`snapshot`, under the root's lock."""
    if not os.path.isdir(root):
        raise ShadowError(f"{root} is not a folder")
    watched = fs_events.events(root)
    generation = watched.generation if watched is not None else -1
    last = state.last if state.watched is watched else None
    named: frozenset[str] | None = None
    complete = last is None
    if last is not None and watched is not None:
        if state.generation == generation:
            return last
        since = watched.since(state.generation)
        if since is None or since[1]:
            complete = True
        else:
            named = frozenset(_relative(root, since[0]))
    with state.repo.locked():
        # The defaults stay those of the process's first pass, even past a pass from scratch: two snapshots
        # compared with different defaults would differ in every file's entry of `modes`
        defaults = state.last.defaults if state.last is not None else None
        pass_ = Pass(state.repo, root, last, defaults)
        if last is None or complete:
            kind, taken = "complete", pass_.complete()
        elif named is not None and len(named) <= MAX_NAMED:
            kind, taken = "named", pass_.named(named) if named else last
        else:
            kind, taken = "changed", pass_.changed()
    PASSES[kind] += 1
    state.last, state.watched, state.generation = taken, watched, generation
    return taken


def warm(home: Path, root: str) -> None:
    """Take the root's first snapshot of this process in the background (a daemon thread), so the first command
    of a turn finds it made: on a large tree that first pass hashes what changed since the last process's."""
    state = _root_state(home, root)
    if state.last is not None or state.lock.locked():
        return

    def take() -> None:
        try:
            snapshot(home, root)
        except (ShadowError, OSError) as exc:
            log.info("no snapshot of %s ahead of its first command: %s", root, exc)

    threading.Thread(target=take, name="snapshot-warm-up", daemon=True).start()


def _relative(root: str, paths: Iterable[str]) -> list[str]:
    prefix = root.rstrip(os.sep) + os.sep
    return [path[len(prefix) :].replace(os.sep, "/") for path in paths if path.startswith(prefix)]


def forget(home: Path, root: str) -> None:
    """Drop what this process knows of the root (its shadow was removed)."""
    with _registry:
        _roots.pop((home, root), None)
