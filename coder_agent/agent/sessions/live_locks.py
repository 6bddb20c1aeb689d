"""Which sessions are live in an agent process, across processes: a lock file per session, held while it is.

Two agents (two editors, an editor and `coder-agent run`) share one store, and `coder-agent sessions undo` works
on it from a shell. A session must be driven by one process at a time: what another writes to it is lost at the
live one's next save (the notes for its model, say), and files it puts back may be changed again under it. So a
process holds `$CODER_AGENT_HOME/live/<session id>` locked (`flock`) while the session is live in it: another
process that finds it held refuses, with the reason. The kernel lets the lock go when the process ends, however
it ends (`kill -9` too): nothing stale is ever left. The files stay (empty); a deleted session's goes with it.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
from pathlib import Path

from ...kit.private import open_private, private_folder

log = logging.getLogger(__name__)

FOLDER = "live"


def _path(home: Path, session_id: str) -> Path:
    safe = "".join(char if char.isalnum() or char in "-_" else "_" for char in session_id)
    return home / FOLDER / f"{safe}.lock"


def _try_lock(fd: int, kind: int) -> bool:
    try:
        fcntl.flock(fd, kind | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EACCES):
            return False
        raise
    return True


class LiveLocks:
    """The locks this process holds, one per live session."""

    def __init__(self, home: Path) -> None:
        self._home = home
        self._held: dict[str, int] = {}

    def hold(self, session_id: str) -> bool:
        """Hold the session's lock; False when another process (or another connection here) holds it."""
        if session_id in self._held:
            return True
        try:
            private_folder(self._home / FOLDER)
            fd = open_private(_path(self._home, session_id), os.O_RDWR)
        except OSError as exc:  # a data folder that cannot hold locks: sessions are not guarded, as before
            log.warning("session %s is not guarded against other processes: %s", session_id, exc)
            return True
        if not _try_lock(fd, fcntl.LOCK_EX):
            os.close(fd)
            return False
        self._held[session_id] = fd
        return True

    def release(self, session_id: str, forget: bool = False) -> None:
        """Let the session go (`forget`: it was deleted, and its lock file goes too)."""
        fd = self._held.pop(session_id, None)
        if forget:
            _path(self._home, session_id).unlink(missing_ok=True)
        if fd is not None:
            os.close(fd)

    def release_all(self) -> None:
        for session_id in list(self._held):
            self.release(session_id)


def held_elsewhere(home: Path, session_id: str) -> bool:
    """Whether a process holds the session live (for a command that must not act on it meanwhile)."""
    path = _path(home, session_id)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        if not _try_lock(fd, fcntl.LOCK_SH):
            return True
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)
