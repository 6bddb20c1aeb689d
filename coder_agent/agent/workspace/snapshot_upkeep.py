"""Keeping the shadows small: old snapshots' objects collected, and the shadows of roots no session uses removed.

A shadow needs only its latest snapshot (its index) and the snapshots commands are running between: what a turn
changed, and what the files held before, is in the session store (`checkpoints`), not here. So each shadow is
collected (`git gc --prune=now`: what the index does not name goes) once loose objects or packs pile up, at the
end of a turn, never while a command is running: a `Watch` pins the shadows of its roots (a shared `flock` on
`pins`, held from the snapshot before a command to the one after it, in any process), and a collection goes
ahead only when it can take that lock alone. When a session is deleted, the shadows of the roots no remaining
session names are removed. Blocking: run it in a worker thread.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from ...kit.private import open_private, private_folder
from .shadow_repo import FOLDER, ShadowError, ShadowRepo

log = logging.getLogger(__name__)

MAX_LOOSE = 1000  # loose objects in a shadow past which it is collected (a command's few files make a few each)
MAX_PACKS = 16
CHECK_AFTER = 100  # objects written by this process before the shadow's objects are counted again
GC_TIMEOUT = 300.0


def pin(repo: ShadowRepo) -> int | None:
    """Hold the shadow's objects while a command runs (a shared lock); the descriptor to `unpin`, or None when
    the shadow cannot be pinned (a collection now running: it keeps what its index names)."""
    try:
        private_folder(repo.git_dir)
        fd = open_private(repo.git_dir / "pins", os.O_RDWR)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)  # a collection holds it only while it runs (bounded)
    except OSError:
        os.close(fd)
        return None
    return fd


def unpin(fd: int | None) -> None:
    if fd is not None:
        os.close(fd)


def maintain(repo: ShadowRepo) -> bool:
    """Collect the shadow when it has piled up objects and no command anywhere holds it; whether it did."""
    if not repo.git_dir.is_dir() or repo.written < CHECK_AFTER:
        return False  # too few objects written here since the last count for a count to be worth a git call
    try:
        loose, packs = repo.count_objects()
    except ShadowError:
        return False
    if loose <= MAX_LOOSE and packs <= MAX_PACKS:
        repo.written = 0
        return False
    fd = open_private(repo.git_dir / "pins", os.O_RDWR)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                return False  # a command runs between two snapshots: later
            raise
        with repo.locked():
            repo.run("gc", "--quiet", "--prune=now", timeout=GC_TIMEOUT)
        repo.written = 0
        log.info("collected the snapshots of %s (%d loose objects, %d packs)", repo.root, loose, packs)
        return True
    except ShadowError as exc:
        log.warning("could not collect the snapshots of %s: %s", repo.root, exc)
        return False
    finally:
        os.close(fd)


def shadow_roots(home: Path) -> dict[Path, str]:
    """Each shadow in the data folder, and the root it keeps (as its `root` file says)."""
    found: dict[Path, str] = {}
    folder = home / FOLDER
    if not folder.is_dir():
        return found
    for shadow in folder.iterdir():
        try:
            found[shadow] = (shadow / "root").read_text(encoding="utf-8").strip()
        except OSError:
            continue  # being made: its root file comes with its first snapshot
    return found


def prune(home: Path, roots_in_use: Iterable[str]) -> list[str]:
    """Remove the shadows of roots no session names any more; the roots whose shadow went."""
    used = {os.path.realpath(root) for root in roots_in_use}
    removed: list[str] = []
    for shadow, root in shadow_roots(home).items():
        if root in used:
            continue
        repo = ShadowRepo(shadow, root, root)
        try:
            with repo.locked(wait=1.0, prepare=False):
                shutil.rmtree(shadow)
        except (ShadowError, OSError) as exc:
            log.info("kept the snapshots of %s for now: %s", root, exc)
            continue
        removed.append(root)
    return removed
