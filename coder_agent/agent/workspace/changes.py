"""Which files a command changed: the session's roots looked at before and after it, and compared.

A model can bypass the edit tools (`sed -i`, a heredoc, a formatter, a code generator); the user must still see
every change. In a git work tree the look is git's own (`git status`: cheap on large trees, honours .gitignore,
never runs what the checkout configures: see `git.py`), and records only the files that differ from git's index,
with their size and modification time. Elsewhere the files that .gitignore keeps are listed and stat-ed. An
inotify watch of each root (`fs_events.py`) lets a look be reused while nothing happened under the root, and
outside git be brought up to date from the files the events name.

What a changed file held before the command is known when it was clean in git before the command (the same in
the work tree, the index and the commit checked out then): that commit has it, whatever the command did to the
index or to HEAD since (`prior_content`, which reads no more of it than a cap). Otherwise the caller may know it
from its own records (the session's checkpoints), or not at all.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import anyio

from . import fs_events
from .file_content import MAX_TAKEN_BYTES, TOO_LARGE, UNKNOWN, Content, too_large
from .git import git_answer, git_output
from .ignore import walk, walked

STATUS_TIMEOUT = 10.0
MAX_WALKED_FILES = 20_000  # outside git: past this, changes are not looked for (said once in the log)

Kind = Literal["created", "modified", "deleted"]


@dataclass(frozen=True)
class Stat:
    size: int
    mtime_ns: int


def _stat(path: str) -> Stat | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return Stat(info.st_size, info.st_mtime_ns)


@dataclass(frozen=True)
class Look:
    """One root at one moment: `files` maps absolute paths to their state (None: missing)."""

    root: str
    top: str | None  # the git work tree's top folder; None when the root is not in one (or git failed)
    files: dict[str, Stat | None]  # git: the files that differ from the commit checked out; else every file
    new: frozenset[str] = frozenset()  # git: files the commit checked out does not have (untracked or added)
    head: str | None = None  # git: the commit checked out
    complete: bool = True  # outside git: False when the walk stopped at MAX_WALKED_FILES
    problem: str = ""  # in a git work tree whose `git status` failed (a `required` filter): why, and what was done


@dataclass(frozen=True)
class Seen:
    path: str  # absolute
    kind: Kind
    prior_in_git: bool  # the file was clean in git before: the commit checked out then has its old content


async def _top(root: str) -> str | None:
    output = await git_output(root, "rev-parse", "--show-toplevel", timeout=STATUS_TIMEOUT)
    return output.decode("utf-8", "surrogateescape").strip() if output else None


def _parse_status(output: bytes, top: str) -> tuple[list[str], set[str], str | None]:
    """`git status --porcelain=v2 --branch -z` -> (absolute paths that differ, those the commit checked out
    does not have, the commit checked out)."""
    paths: list[str] = []
    new: set[str] = set()
    head: str | None = None
    for entry in output.split(b"\0"):
        if entry.startswith(b"# branch.oid "):
            oid = entry[len(b"# branch.oid ") :].decode()
            head = None if oid == "(initial)" else oid
            continue
        kind = entry[:2]
        if kind == b"1 ":  # 1 XY sub mH mI mW hH hI path
            fields = entry.split(b" ", 8)
            name, added = fields[8], fields[1][:1] == b"A"
        elif kind == b"u ":  # u XY sub m1 m2 m3 mW h1 h2 h3 path
            name, added = entry.split(b" ", 10)[10], False
        elif kind == b"? ":
            name, added = entry[2:], True
        else:
            continue
        path = os.path.join(top, name.decode("utf-8", "surrogateescape"))
        paths.append(path)
        if added:
            new.add(path)
    return paths, new, head


def _stats(paths: Sequence[str]) -> dict[str, Stat | None]:
    return {path: _stat(path) for path in paths}


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _named_by_root(paths: Sequence[str], root: str) -> list[str]:
    """git's paths (under the real top folder) that are under `root`, named through `root`: a session's folder
    may be a symlink (macOS's /tmp is one), and its files are named as the session names them."""
    real = os.path.realpath(root)
    return [os.path.join(root, os.path.relpath(path, real)) for path in paths if _inside(path, real) and path != real]


def _in_top(path: str, top: str) -> str:
    """`path` relative to git's top folder, its folders' symlinks resolved (not the file's own: a symlink in the
    tree is a file to git)."""
    folder, name = os.path.split(path)
    return os.path.relpath(os.path.join(os.path.realpath(folder), name), top)


async def look(root: str, top: str | None = None) -> Look:
    """The state of `root`'s files as the comparison needs it (`top`: its git top folder, when known)."""
    top = top or await _top(root)
    failed = ""
    if top is not None:
        # --no-ahead-behind: `--branch` is for the commit checked out; counting a far upstream would cost
        args = ["status", "--porcelain=v2", "--branch", "--no-ahead-behind", "-z", "-uall", "--no-renames"]
        answer = await git_answer(root, *args, "--", ".", timeout=STATUS_TIMEOUT)
        if answer.output is not None:
            paths, new, head = _parse_status(answer.output, top)
            paths = _named_by_root(paths, root)
            new = set(_named_by_root(list(new), root))
            files = await anyio.to_thread.run_sync(_stats, paths)
            return Look(root, top, files, frozenset(new), head)
        failed = answer.error
    names, capped = await anyio.to_thread.run_sync(walk, root, MAX_WALKED_FILES)
    paths = [os.path.join(root, name) for name in names]
    problem = ""
    if failed:  # said, not silently swapped for the walk: the user relies on seeing every change
        problem = f"git status failed in {root} ({failed}): its files were compared by size and time instead"
        problem += f", and only {MAX_WALKED_FILES:,} of them" if capped else ""
    return Look(root, None, await anyio.to_thread.run_sync(_stats, paths), complete=not capped, problem=problem)


def compare(before: Look, after: Look, committed: frozenset[str] = frozenset()) -> list[Seen]:
    """The files that changed between two looks at one root, in path order.

    `committed`: files that differ between the commits checked out before and after (a command that commits or
    checks out changes files that git then calls clean).
    """
    seen: list[Seen] = []
    for path in sorted(set(before.files) | set(after.files) | committed):
        if path in before.files and path in after.files and before.files[path] == after.files[path]:
            continue
        clean_before = before.top is not None and path not in before.files
        if before.top is None:
            was, now = before.files.get(path), after.files.get(path)
        else:
            # Not listed: as the commit has it. A file that is new after and was not listed before did not exist.
            was = None if clean_before and path in after.new else before.files.get(path, _CLEAN)
            now = after.files[path] if path in after.files else _stat(path)
        if was is None and now is None:
            continue
        kind: Kind = "created" if was is None else "deleted" if now is None else "modified"
        seen.append(Seen(path, kind, prior_in_git=clean_before and kind != "created"))
    return seen


_CLEAN = Stat(-1, -1)  # stands for "as the commit checked out has it" in a git look


async def prior_content(look: Look, path: str, cap: int = MAX_TAKEN_BYTES, past_cap: str = TOO_LARGE) -> Content:
    """What a file that was clean at `look` held then (from the commit checked out then): its bytes when at most
    `cap`; else its size (and `past_cap`), or that it was a link (`UNKNOWN` when git cannot say).

    The entry is listed first, with its size: git's whole output is held in memory, and a 1 GB blob must not be.
    """
    if look.top is None or look.head is None:
        return UNKNOWN
    relative = _in_top(path, look.top)
    listed = await git_output(look.top, "ls-tree", "-l", "-z", look.head, "--", relative, timeout=STATUS_TIMEOUT)
    entry = _tree_entry(listed or b"", relative)
    if entry is None:
        return UNKNOWN
    mode, kind, blob, size = entry
    if kind != "blob":
        return UNKNOWN  # a submodule's commit: not a file's content
    if size > cap:
        return too_large(size, past_cap)
    data = await git_output(look.top, "cat-file", "blob", blob, timeout=STATUS_TIMEOUT)
    if data is None:
        return UNKNOWN
    if mode == "120000":  # a symbolic link: git keeps its target
        return Content(size=size, withheld=f"a link to {data.decode('utf-8', 'replace')}: not followed")
    return Content(data, size=len(data))


def _tree_entry(listed: bytes, relative: str) -> tuple[str, str, str, int] | None:
    """The (mode, type, object, size) of `relative` in `git ls-tree -l -z` output, or None when it is not listed."""
    name = relative.replace(os.sep, "/").encode("utf-8", "surrogateescape")
    for line in listed.split(b"\0"):
        meta, _, path = line.partition(b"\t")
        fields = meta.split()
        if path == name and len(fields) == 4:
            mode, kind, blob, size = (field.decode("ascii", "replace") for field in fields)
            return mode, kind, blob, int(size) if size.isdigit() else 0
    return None


async def _committed(before: Look, after: Look) -> frozenset[str]:
    """The files of `before.root` that differ between the commits checked out at the two looks."""
    if before.top is None or before.head == after.head or before.head is None or after.head is None:
        return frozenset()
    args = ("diff", "--name-only", "-z", "--no-renames", before.head, after.head, "--", ".")
    output = await git_output(before.root, *args, timeout=STATUS_TIMEOUT)
    if not output:
        return frozenset()
    names = output.decode("utf-8", "surrogateescape").split("\0")
    return frozenset(_named_by_root([os.path.join(before.top, name) for name in names if name], before.root))


# root -> its last look, the watch of its events, and the watch's generation just before the look was taken
_last_looks: dict[str, tuple[Look, fs_events.RootEvents, int]] = {}


async def _current(root: str, top: str | None) -> Look:
    """A look at `root`: the last one when no event under it came since (see `fs_events`); outside git, the last
    one with the files the events named looked at again; else a new one."""
    watched = await anyio.to_thread.run_sync(fs_events.events, root, top)
    if watched is None:
        _last_looks.pop(root, None)
        return await look(root, top)
    generation = watched.generation  # an event during what follows makes the next call look again
    last = _last_looks.get(root)
    if last is not None and last[1] is watched and last[0].top == top:
        if last[2] == generation:
            return last[0]
        named = watched.since(last[2]) if top is None and last[0].complete else None
        if named is not None and not named[1]:
            updated = await anyio.to_thread.run_sync(_updated, last[0], named[0])
            if updated is not None:
                _last_looks[root] = (updated, watched, generation)
                return updated
    fresh = await look(root, top)
    _last_looks[root] = (fresh, watched, generation)
    return fresh


def _updated(last: Look, paths: frozenset[str]) -> Look | None:
    """Outside git: `last` with `paths` looked at again, as the walk would see them (None: past the walk's cap)."""
    files = dict(last.files)
    for path in paths:
        if not _inside(path, last.root) or path == last.root:
            continue
        rel = os.path.relpath(path, last.root).replace(os.sep, "/")
        if walked(last.root, rel) and os.path.isfile(path):  # a symlink too, as the walk lists it
            files[path] = _stat(path)
        else:
            files.pop(path, None)
    if len(files) >= MAX_WALKED_FILES:
        return None
    return Look(last.root, None, files)


class Watch:
    """Looks at a session's roots before a command, and says after it what the command changed."""

    def __init__(self, roots: Sequence[str], tops: dict[str, str | None] | None = None) -> None:
        """`tops`: each root's git top folder as found before (shared by the watches of one turn), filled in here."""
        self._roots = list(dict.fromkeys(roots))
        self._tops = {} if tops is None else tops
        self._before: list[Look] = []
        self.problems: dict[str, str] = {}  # root -> why git could not say what changed there (`Look.problem`)

    async def start(self) -> None:
        self._before = []
        for root in self._roots:
            if root not in self._tops:
                self._tops[root] = await _top(root)
            self._before.append(self._noted(await _current(root, self._tops[root])))

    def _noted(self, look: Look) -> Look:
        if look.problem:
            self.problems[look.root] = look.problem
        return look

    async def changes(self) -> list[tuple[Look, Seen]]:
        """What changed since `start()`, each with the look it was seen from (for `prior_content`)."""
        found: list[tuple[Look, Seen]] = []
        reported: set[str] = set()
        for before in self._before:
            after = self._noted(await _current(before.root, before.top))
            if after is before:  # no event under the root since the look before: nothing changed
                continue
            for seen in compare(before, after, await _committed(before, after)):
                if seen.path not in reported:  # nested roots see the same file twice
                    reported.add(seen.path)
                    found.append((before, seen))
        return found
