"""What changed between two snapshots of one root, and what a file held in one of them.

The trees are compared by git (`diff-tree`: only the folders whose trees differ are read), and what is kept
beside them (exact modes, files past the cap, files not read) by comparing those small maps. A file's bytes are
read from the shadow only once its size is known to be within the cap. Blocking: run it in a worker thread.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterable, Mapping, Sequence

from .shadow_repo import GIT_TIMEOUT, ShadowError, ShadowRepo, git_environment
from .snapshot_pass import Snapshot
from .snapshots import ABSENT_SIDE, Difference, Side

GITLINK = "160000"
LINK = "120000"


def side(snapshot: Snapshot, rel: str, git_mode: str, oid: str | None) -> Side:
    """The file `rel` in `snapshot`, given its tree entry (mode "000000": not in the tree)."""
    if git_mode == LINK:
        return Side("link", oid)
    if git_mode in ("100644", "100755") and oid is not None:
        return Side("file", oid, snapshot.mode_of(rel, git_mode == "100755"))
    if rel in snapshot.big:
        size, stamp = snapshot.big[rel]
        return Side("big", size=size, stamp=stamp)
    if rel in snapshot.unread:
        return Side("unread", why=snapshot.unread[rel])
    return ABSENT_SIDE  # absent, or a repository of its own (a gitlink)


def _parse_raw(output: bytes) -> Iterable[tuple[str, str, str, str, str]]:
    """`diff-tree -r -z --raw` -> (path, mode before, mode after, oid before, oid after)."""
    fields = output.split(b"\0")
    for index in range(0, len(fields) - 1, 2):
        meta, path = fields[index], fields[index + 1]
        if not meta.startswith(b":"):
            continue
        mode_a, mode_b, oid_a, oid_b, _ = meta[1:].decode("ascii").split(" ", 4)
        yield path.decode("utf-8", "surrogateescape"), mode_a, mode_b, oid_a, oid_b


def _entries(repo: ShadowRepo, tree: str, rels: Sequence[str]) -> dict[str, tuple[str, str]]:
    """rel -> (git mode, oid) for the paths of `rels` that `tree` has."""
    output = repo.run("ls-tree", "-r", "-z", "--full-tree", tree, "--", *rels)
    found: dict[str, tuple[str, str]] = {}
    for line in output.split(b"\0"):
        meta, _, path = line.partition(b"\t")
        parts = meta.decode("ascii", "replace").split()
        if len(parts) == 3:
            found[path.decode("utf-8", "surrogateescape")] = (parts[0], parts[2])
    return found


def _apart(before: Snapshot, after: Snapshot) -> set[str]:
    """Paths whose kept-apart facts differ between the two snapshots."""
    changed: set[str] = set()
    for old, new in ((before.modes, after.modes), (before.big, after.big), (before.unread, after.unread)):
        pair: tuple[Mapping[str, object], Mapping[str, object]] = (old, new)
        changed |= {rel for rel in set(pair[0]) | set(pair[1]) if pair[0].get(rel) != pair[1].get(rel)}
    return changed


def differences(repo: ShadowRepo, before: Snapshot, after: Snapshot) -> list[Difference]:
    """The files that differ between two snapshots of the same root, in path order."""
    found: dict[str, Difference] = {}
    if before.tree != after.tree:
        output = repo.run("diff-tree", "-r", "-z", "--no-renames", "--raw", before.tree, after.tree)
        for rel, mode_a, mode_b, oid_a, oid_b in _parse_raw(output):
            if GITLINK in (mode_a, mode_b):
                continue
            was = side(before, rel, mode_a, oid_a if mode_a != "000000" else None)
            now = side(after, rel, mode_b, oid_b if mode_b != "000000" else None)
            if was != now:
                found[rel] = Difference(rel, was, now)
    rest = sorted(_apart(before, after) - set(found))
    if rest:
        old, new = _entries(repo, before.tree, rest), _entries(repo, after.tree, rest)
        for rel in rest:
            was = side(before, rel, *_or_none(old.get(rel)))
            now = side(after, rel, *_or_none(new.get(rel)))
            if was != now:
                found[rel] = Difference(rel, was, now)
    return [found[rel] for rel in sorted(found)]


def _or_none(entry: tuple[str, str] | None) -> tuple[str, str | None]:
    return entry if entry is not None else ("000000", None)


def sides(repo: ShadowRepo, snapshot: Snapshot, rels: Sequence[str]) -> dict[str, Side]:
    """Each of `rels` as `snapshot` has it."""
    entries = _entries(repo, snapshot.tree, rels) if rels else {}
    return {rel: side(snapshot, rel, *_or_none(entries.get(rel))) for rel in rels}


def read_blobs(repo: ShadowRepo, oids: Sequence[str], cap: int, budget: int | None = None) -> dict[str, bytes | int]:
    """Each blob's bytes when at most `cap` and, in order, all of them within `budget`; else its size.

    One `git cat-file --batch`, asked one object at a time: its size comes first, and one past what may be read
    is not read (its process is stopped; a new one reads on). A snapshot holds no file past the cap, but a file
    that grew while git read it could be one.
    """
    wanted = list(dict.fromkeys(oids))
    found: dict[str, bytes | int] = {}
    left = cap * len(wanted) if budget is None else budget
    while wanted:
        left = _read_some(repo, wanted, cap, left, found)
    return found


def _read_some(repo: ShadowRepo, wanted: list[str], cap: int, left: int, found: dict[str, bytes | int]) -> int:
    """Read blobs off the front of `wanted` (taking them off) until one must not be read; the budget left."""
    process = subprocess.Popen(
        repo.command("cat-file", "--batch"),
        cwd=repo.root,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=git_environment(),
    )
    timer = threading.Timer(GIT_TIMEOUT, process.kill)  # a git that hangs is stopped: what is read so far stands
    timer.start()
    try:
        assert process.stdin is not None and process.stdout is not None
        while wanted:
            oid = wanted.pop(0)
            process.stdin.write(f"{oid}\n".encode())
            process.stdin.flush()
            header = process.stdout.readline().split()
            if len(header) != 3 or not header[2].isdigit():
                continue  # missing: nothing to read
            size = int(header[2])
            if size > min(cap, left):
                found[oid] = size
                return left  # not read: this process is stopped, the rest read by a new one
            found[oid] = process.stdout.read(size)
            process.stdout.read(1)  # the newline after it
            left -= size
        return left
    except OSError as exc:
        raise ShadowError(f"git cat-file: {exc}") from None
    finally:
        timer.cancel()
        process.kill()
        process.wait()
