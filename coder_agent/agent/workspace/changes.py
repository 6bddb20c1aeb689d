"""Which files a command changed: the session's roots snapshotted before and after it, and compared.

A model can bypass the edit tools (`sed -i`, a heredoc, a formatter, a code generator); the user must still see
every change, and undo must be able to put back what the file held. One way serves every root, in a repository
or not: a snapshot of the root (`snapshots.py`: every file .gitignore keeps, in the agent's shadow repository)
before the command and one after, compared (`snapshot_diff.py`). The snapshot before holds what each changed
file held then, whether git tracks it or not, with its mode; files past the cap are said, not kept. The inotify
watch of each root lets a snapshot be reused while nothing happened (a command that writes nothing costs
nothing), and says which paths to look at otherwise.

The shadows live in the data folder (`home`); with none (the store could not be used), in a private temporary
folder of this process.
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

import anyio

from .file_content import ABSENT, Content, link_content, too_large
from .shadow_repo import ShadowError
from .snapshot_diff import differences, read_blobs, sides
from .snapshot_pass import Snapshot
from .snapshot_upkeep import pin, unpin
from .snapshots import Side, repo_of, snapshot, warm

log = logging.getLogger(__name__)

Kind = Literal["created", "modified", "deleted"]
NOT_KEPT = "too large to keep"


@dataclass(frozen=True)
class Seen:
    path: str  # absolute, as the session names it
    kind: Kind
    before: Side
    after: Side
    root: str


_temporary: Path | None = None


def _home(home: Path | None) -> Path:
    """The data folder, or this process's own temporary one (removed at exit)."""
    global _temporary
    if home is not None:
        return home
    if _temporary is None:
        _temporary = Path(tempfile.mkdtemp(prefix="coder-agent-snapshots-"))
        atexit.register(shutil.rmtree, _temporary, True)
    return _temporary


def warm_up(roots: Sequence[str], home: Path | None) -> None:
    """Start each root's first snapshot of this process, while the model thinks (`snapshots.warm`)."""
    for root in roots:
        warm(_home(home), root)


def _kind(before: Side, after: Side) -> Kind:
    return "created" if before.state == "absent" else "deleted" if after.state == "absent" else "modified"


class Watch:
    """Snapshots a session's roots before a command, and says after it what the command changed."""

    def __init__(self, roots: Sequence[str], home: Path | None = None) -> None:
        self._roots = list(dict.fromkeys(roots))
        self.home = _home(home)
        self.before: dict[str, Snapshot] = {}
        self.after: dict[str, Snapshot] = {}
        self._pins: dict[str, int | None] = {}
        self.problems: dict[str, str] = {}  # root -> why what changed there could not be seen

    async def _snapshot(self, root: str) -> Snapshot | None:
        try:
            # Abandoned on cancel: the pass finishes in its thread (it holds the shadow's lock) and is kept.
            return await anyio.to_thread.run_sync(snapshot, self.home, root, abandon_on_cancel=True)
        except (ShadowError, OSError) as exc:
            self.problems[root] = f"the files of {root} could not be snapshotted ({exc})"
            log.warning("%s", self.problems[root])
            return None

    async def start(self) -> None:
        """Snapshot each root, pinned until `close` (its objects are not collected meanwhile)."""
        self.before = {}
        for root in self._roots:
            if root not in self._pins:
                self._pins[root] = await anyio.to_thread.run_sync(pin, repo_of(self.home, root))
            taken = await self._snapshot(root)
            if taken is not None:
                self.before[root] = taken

    def close(self) -> None:
        """Let the roots' shadows be collected again (once what changed was read)."""
        for fd in self._pins.values():
            unpin(fd)
        self._pins = {}

    async def changes(self) -> list[Seen]:
        """What changed since `start()`, in path order per root."""
        found: list[Seen] = []
        reported: set[str] = set()
        for root, before in self.before.items():
            after = await self._snapshot(root)
            if after is not None:
                self.after[root] = after
            if after is None or after is before:  # nothing happened under the root since the snapshot
                continue
            repo = repo_of(self.home, root)
            try:
                diffs = await anyio.to_thread.run_sync(differences, repo, before, after, abandon_on_cancel=True)
            except ShadowError as exc:
                self.problems[root] = f"what changed in {root} could not be compared ({exc})"
                continue
            for diff in diffs:
                path = os.path.join(root, *diff.rel.split("/"))
                if path not in reported:  # nested roots see the same file twice
                    reported.add(path)
                    found.append(Seen(path, _kind(diff.before, diff.after), diff.before, diff.after, root))
        return found

    async def sides_now(self, root: str, paths: Sequence[str]) -> dict[str, Side]:
        """Each of `paths` (under `root`) as the snapshot taken at `start()` has it."""
        before = self.before.get(root)
        if before is None:
            return {}
        prefix = root.rstrip(os.sep) + os.sep
        rels = {path[len(prefix) :].replace(os.sep, "/"): path for path in paths if path.startswith(prefix)}
        try:
            found = await anyio.to_thread.run_sync(sides, repo_of(self.home, root), before, sorted(rels))
        except ShadowError:
            return {}
        return {rels[rel]: side for rel, side in found.items()}

    async def contents(self, root: str, wanted: Sequence[Side], cap: int, budget: int) -> dict[str, bytes | int]:
        """The blobs of `wanted` (files and links) from the root's shadow, in order: bytes while each is within
        `cap` and all within `budget`, else the size."""
        oids = [side.oid for side in wanted if side.oid is not None and side.state in ("file", "link")]
        if not oids:
            return {}
        try:
            repo = repo_of(self.home, root)
            return await anyio.to_thread.run_sync(read_blobs, repo, oids, cap, budget)
        except ShadowError as exc:
            log.warning("could not read the earlier contents in %s: %s", root, exc)
            return {}


def content_of(side: Side, blobs: dict[str, bytes | int], past_cap: str) -> Content:
    """What a file held in a snapshot, as the turn keeps it (`blobs`: from `Watch.contents`)."""
    if side.state == "absent":
        return ABSENT
    if side.state == "big":
        return too_large(side.size or 0, NOT_KEPT)
    if side.state == "unread":
        return Content(withheld=side.why)
    got = blobs.get(side.oid or "")
    if side.state == "link":
        if isinstance(got, bytes):
            return link_content(os.fsdecode(got))
        return Content(withheld="a link whose target could not be read")
    if isinstance(got, bytes):
        return Content(got, size=len(got), mode=side.mode)
    if isinstance(got, int):
        return replace(too_large(got, past_cap), mode=side.mode)
    return Content(withheld="its content before could not be read", mode=side.mode)
