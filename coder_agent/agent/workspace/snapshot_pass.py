"""One pass over a root (`snapshots.py` decides when, and over which paths): git's index brought up to date with
the files the ignore rules keep (only files whose stat changed are hashed), its tree written, and what a git tree
cannot hold kept beside it: modes past the usual two, files past the cap, files that could not be read. The
`Snapshot` it makes is what every snapshot is. Blocking: run it in a worker thread.
"""

from __future__ import annotations

import logging
import os
import stat
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ...prestart.git_calls import run_now
from .file_content import MAX_TAKEN_BYTES
from .shadow_repo import EMPTY_TREE, GIT_TIMEOUT, ShadowError, ShadowRepo

log = logging.getLogger(__name__)

MAX_FILE_BYTES = MAX_TAKEN_BYTES  # a file past this is not kept (its size says it changed); see checkpoints
MAX_FILES = 200_000  # files in one root; past this, it is not snapshotted (said)
BULK_ADDS = 256  # files hashed in one pass past this go straight into one pack, not a file each
USER_TRACKED_TIMEOUT = 10.0
HASH_TIME = 0.005  # seconds a file may take to hash on a loaded machine: the bound of a pass that hashes many

State = Literal["absent", "file", "link", "big", "unread"]


DEFAULT_MODES = (0o644, 0o755)  # (plain, executable) until a first pass finds what most of a tree's files have


@dataclass(frozen=True)
class Snapshot:
    """One root at one moment. Paths are relative to the root, "/"-separated."""

    root: str  # as the session names it
    tree: str  # the git tree of the root's files
    modes: Mapping[str, int] = field(default_factory=dict)  # permission bits where not `defaults`
    big: Mapping[str, tuple[int, int]] = field(default_factory=dict)  # past the cap: (size, mtime_ns)
    unread: Mapping[str, str] = field(default_factory=dict)  # could not be read: why
    nested: frozenset[str] = frozenset()  # folders that are repositories of their own
    # The modes most plain and executable files have (644 and 755, or 664 and 775 under a umask of 002): `modes`
    # holds the others alone, so a pass never copies a map of every file
    defaults: tuple[int, int] = DEFAULT_MODES

    def mode_of(self, rel: str, executable: bool) -> int:
        """The permission bits of the file `rel`, whose tree entry says whether it is executable."""
        return self.modes.get(rel, self.defaults[executable])


class Pass:
    """One pass over a root, under its shadow's lock."""

    def __init__(self, repo: ShadowRepo, root: str, last: Snapshot | None, defaults: tuple[int, int] | None) -> None:
        self.repo = repo
        self.root = root
        self.last = last
        self.defaults = defaults

    def _list(self, *options: str, paths: Sequence[str] = ()) -> list[str]:
        output = self.repo.run("ls-files", "-z", *options, "--exclude-standard", *(["--", *paths] if paths else []))
        return [name for name in output.decode("utf-8", "surrogateescape").split("\0") if name]

    def complete(self) -> Snapshot:
        """Every file the ignore rules keep (and the index's files they now hide taken out)."""
        listed = self._list("-c", "-o")
        if len(listed) > MAX_FILES:
            raise ShadowError(f"{self.root} holds more than {MAX_FILES:,} files that .gitignore keeps")
        forced = self._user_tracked()
        kept = set(forced)
        hidden = [rel for rel in self._list("-c", "-i") if rel not in kept]  # kept before, ignored now
        gone = set(hidden)
        candidates = [rel for rel in [*listed, *forced] if rel not in gone]
        return self._apply(candidates, hidden, {}, {}, {}, frozenset())

    def named(self, named: frozenset[str]) -> Snapshot:
        """The paths events named (files, or folders made or removed), and what the last snapshot kept apart
        under them."""
        last = self.last
        assert last is not None
        candidates = self._list("-c", "-o", paths=sorted(named))
        under = _under(named)
        modes = {rel: mode for rel, mode in last.modes.items() if not under(rel)}
        big = {rel: size for rel, size in last.big.items() if not under(rel)}
        unread = {rel: why for rel, why in last.unread.items() if not under(rel)}
        extra = [rel for rel in (*last.modes, *last.big, *last.unread) if under(rel)]
        nested = frozenset(rel for rel in last.nested if not under(rel))
        return self._apply([*candidates, *extra], [], modes, big, unread, nested)

    def changed(self) -> Snapshot:
        """No events to go by: git compares every file with its index entry (only changed ones are hashed)."""
        last = self.last
        assert last is not None
        listed = self._list("-m", "-d", "-o")
        if any(rel == ".gitignore" or rel.endswith("/.gitignore") for rel in listed):
            return self.complete()  # what is ignored changed: look at everything again
        extra = [*last.modes, *last.big, *last.unread]  # a mode, or a file past the cap, changes unseen by git
        candidates = set(listed) | set(extra) | set(self._moded(last))
        modes = {rel: mode for rel, mode in last.modes.items() if rel not in candidates}
        big = {rel: size for rel, size in last.big.items() if rel not in candidates}
        unread = {rel: why for rel, why in last.unread.items() if rel not in candidates}
        return self._apply(sorted(candidates), [], modes, big, unread, last.nested)

    def _moded(self, last: Snapshot) -> list[str]:
        """Files whose permission bits changed and nothing else (git sees only the executable bit change):
        each file in the index looked at (`lstat`)."""
        output = self.repo.run("ls-files", "-z", "-s")
        changed: list[str] = []
        for line in output.decode("utf-8", "surrogateescape").split("\0"):
            meta, _, rel = line.partition("\t")
            if not meta.startswith(("100644", "100755")):
                continue
            try:
                info = os.lstat(os.path.join(self.repo.root, rel))
            except OSError:
                continue  # gone: git lists it as deleted
            mode = stat.S_IMODE(info.st_mode)
            if stat.S_ISREG(info.st_mode) and mode != last.mode_of(rel, meta.startswith("100755")):
                changed.append(rel)
        return changed

    def _user_tracked(self) -> list[str]:
        """Files the project's own repository tracks although its ignore rules match them (added with -f):
        `git status` shows their changes, so they are kept too."""
        if not os.path.lexists(os.path.join(self.repo.top, ".git")):
            return []
        answer = run_now(self.repo.root, ["ls-files", "-z", "-c", "-i", "--exclude-standard"], USER_TRACKED_TIMEOUT)
        names = (answer.output or b"").decode("utf-8", "surrogateescape").split("\0")
        return [name for name in names if name]

    def _apply(
        self,
        candidates: Sequence[str],
        removed: Sequence[str],
        modes: dict[str, int],
        big: dict[str, tuple[int, int]],
        unread: dict[str, str],
        nested: frozenset[str],
    ) -> Snapshot:
        """Look at each candidate, bring the index up to date, and write the tree."""
        add: list[str] = []
        remove: list[str] = list(removed)
        folders = set(nested)
        seen_modes: dict[str, int] = {}
        for rel in candidates:
            if rel.endswith("/"):  # a repository of its own (git lists it as a folder)
                folders.add(rel)
                remove.append(rel.rstrip("/"))
        inside = _under(frozenset(folders))
        for rel in dict.fromkeys(candidates):
            if rel.endswith("/"):
                continue
            if inside(rel):
                remove.append(rel)
                continue
            kind, info = _look(os.path.join(self.repo.root, rel))
            if kind == "add":
                add.append(rel)
                assert info is not None
                if not stat.S_ISLNK(info.st_mode):
                    seen_modes[rel] = stat.S_IMODE(info.st_mode)
            else:
                remove.append(rel)
                if kind == "big":
                    assert info is not None
                    big[rel] = (info.st_size, info.st_mtime_ns)
                elif kind != "gone":
                    unread[rel] = kind
        defaults = self.defaults if self.defaults is not None else _most_common(seen_modes.values())
        for rel, mode in seen_modes.items():
            if mode != defaults[bool(mode & stat.S_IXUSR)]:
                modes[rel] = mode
        self._update(add, remove)
        self.repo.written += len(add) + 1  # at most a blob each, and the trees above them
        tree = self._tree()
        return Snapshot(self.root, tree, modes, big, unread, frozenset(folders), defaults)

    def _update(self, add: list[str], remove: list[str]) -> None:
        if remove:
            self.repo.run("update-index", "-z", "--force-remove", "--stdin", stdin=_z(remove))
        while add:
            # Many files at once (a first pass): their objects go into one pack as they are hashed, instead of
            # a file each (10,000 small files: 40 MB of loose objects, and seconds of writing them).
            bulk = ("core.bigFileThreshold=1",) if len(add) > BULK_ADDS else ()
            timeout = max(GIT_TIMEOUT, len(add) * HASH_TIME)  # a first pass hashes every file
            options = ("-z", "--add", "--remove", "--replace", "--stdin")
            try:
                self.repo.run("update-index", *options, stdin=_z(add), config=bulk, timeout=timeout)
                return
            except ShadowError as exc:
                failed = _failed_path(str(exc), add)
                if failed is None:
                    raise
                add.remove(failed)  # changed under us (unreadable now, a folder ...): the next pass sees it
                log.info("not kept in the snapshot of %s: %s", self.root, exc)

    def _tree(self) -> str:
        prefix = self.repo.prefix
        try:
            return self.repo.run("write-tree", *([f"--prefix={prefix}"] if prefix else [])).decode().strip()
        except ShadowError as exc:
            if "not found" in str(exc):  # nothing kept under the root
                return EMPTY_TREE
            raise


def _most_common(modes: Iterable[int]) -> tuple[int, int]:
    """The modes most plain and most executable files have (644 and 755 when there are none)."""
    plain: Counter[int] = Counter()
    executable: Counter[int] = Counter()
    for mode in modes:
        (executable if mode & stat.S_IXUSR else plain)[mode] += 1
    return (
        plain.most_common(1)[0][0] if plain else DEFAULT_MODES[0],
        executable.most_common(1)[0][0] if executable else DEFAULT_MODES[1],
    )


def _look(path: str) -> tuple[str, os.stat_result | None]:
    """What to do with one candidate: "add" it, or why not ("gone", "big", or a reason it is not kept)."""
    try:
        info = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return "gone", None
    except OSError as exc:
        return f"it could not be looked at: {exc.strerror or exc}", None
    if stat.S_ISLNK(info.st_mode):
        return "add", info
    if not stat.S_ISREG(info.st_mode):
        return "gone", None  # a folder, a pipe, a socket, a device: not a file to keep
    if info.st_size > MAX_FILE_BYTES:
        return "big", info
    if not os.access(path, os.R_OK):
        return "it could not be read: permission denied", None
    return "add", info


def _under(folders: frozenset[str]) -> Callable[[str], bool]:
    prefixes = tuple(folder.rstrip("/") + "/" for folder in folders)

    def inside(rel: str) -> bool:
        return rel in folders or rel.startswith(prefixes) if prefixes else rel in folders

    return inside


def _z(paths: Iterable[str]) -> bytes:
    return b"".join(os.fsencode(path) + b"\0" for path in paths)


def _failed_path(message: str, paths: Sequence[str]) -> str | None:
    """The path git named in a failed `update-index` ("Unable to process path X", "X: ..."), if one of `paths`."""
    for path in paths:
        if f"path {path}" in message or message.startswith(f"git update-index: {path}"):
            return path
    return None
