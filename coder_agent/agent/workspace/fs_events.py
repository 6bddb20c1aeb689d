"""Whether anything under a root changed since a moment, and what: Linux inotify on every folder of the root.

A snapshot of a root (`snapshots.py`) is a pass over its files. With a watch on every folder, a snapshot can be
reused for as long as no event arrived: the snapshot before a command is the last one when nothing happened
since (a user's edit in between is an event, so it is never taken for the command's), and the one after it is
the one before when the command wrote nothing. The events also say which paths to look at again (`since`):
files, and folders made or removed; only a change of a `.gitignore` (or of a `.git`: a repository made or
removed inside the root) asks for a look at everything. The kernel queues an event when the write is made, so
once a command has exited, its events are there to read.

Every event counts, ignored files' included (they only cost a look). A watch that cannot be trusted is
dropped and every snapshot asks git what changed: not Linux, a file system whose changes inotify may not see
(network and FUSE file systems), more folders than `MAX_FOLDERS`, the kernel's watch limit, a queue overflow,
the root itself removed or moved. Git folders are not watched (what a command commits changes no file of the
work tree). What inotify never sees: writes through a shared memory map (`mmap`), which no command of the usual
kind makes. Stdlib only (ctypes).
"""

from __future__ import annotations

import ctypes
import errno
import logging
import os
import struct
import sys
import threading

log = logging.getLogger(__name__)

MAX_FOLDERS = 8192  # folders watched under one root; past this, the root is looked at as before
MAX_ROOTS = 16  # roots watched at once (an inotify instance each); the oldest is let go
MAX_LOGGED_PATHS = 20_000  # paths remembered for `since`; past this, the oldest drains are forgotten

_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x2, 0x4, 0x8
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x40, 0x80, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF = 0x400, 0x800
_IN_Q_OVERFLOW, _IN_IGNORED, _IN_ONLYDIR, _IN_ISDIR = 0x4000, 0x8000, 0x01000000, 0x40000000
_IN_DONT_FOLLOW = 0x02000000
_IN_NONBLOCK, _IN_CLOEXEC = 0o4000, 0o2000000
_MASK = (_IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE | _IN_DELETE) | (
    _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR
)
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then len bytes of name

# statfs f_type of the local file systems whose every change inotify reports
_LOCAL = {
    0xEF53: "ext2/3/4",
    0x01021994: "tmpfs",
    0x58465342: "xfs",
    0x9123683E: "btrfs",
    0x794C7630: "overlayfs",
    0xF2F52010: "f2fs",
    0x2FC12FC1: "zfs",
    0x858458F6: "ramfs",
}


class Unwatchable(Exception):
    """This root cannot be watched (the message says why); its looks are made every time."""


class _Libc:
    def __init__(self) -> None:
        if not sys.platform.startswith("linux"):
            raise Unwatchable("inotify is Linux only")
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            self.init1 = libc.inotify_init1
            self.add_watch = libc.inotify_add_watch
            self.statfs = libc.statfs
        except (OSError, AttributeError) as exc:
            raise Unwatchable(f"no inotify: {exc}") from None
        self.add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]

    def fs_type(self, path: str) -> int:
        buffer = ctypes.create_string_buffer(256)  # struct statfs: f_type is the first field, a long
        if self.statfs(os.fsencode(path), buffer) != 0:
            raise Unwatchable(f"statfs {path}: {os.strerror(ctypes.get_errno())}")
        return int(ctypes.c_long.from_buffer(buffer).value) & 0xFFFFFFFF


_libc: _Libc | None = None


def _lib() -> _Libc:
    global _libc
    if _libc is None:
        _libc = _Libc()
    return _libc


class RootEvents:
    """The events under one root; `generation` counts the drains that saw any."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.generation = 0
        # per drain that saw events: (its generation, the paths named, whether ignore rules or repositories changed)
        self._log: list[tuple[int, frozenset[str], bool]] = []
        self._forgotten = 0  # the drains up to this generation are no longer in the log
        self._paths: set[str] = set()
        self._structural = False
        self._lock = threading.Lock()
        self._folders: dict[int, str] = {}  # watch descriptor -> folder
        lib = _lib()
        kind = lib.fs_type(root)
        if kind not in _LOCAL:
            raise Unwatchable(f"file system type {kind:#x} is not one inotify fully reports")
        self._fd = lib.init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if self._fd < 0:
            raise Unwatchable(f"inotify_init1: {os.strerror(ctypes.get_errno())}")
        try:
            self._root_wd = self._watch_tree(root, follow=True)  # a session may name its folder by a symlink
            if self._root_wd < 0:
                raise Unwatchable("the root is not a folder")
        except BaseException:
            os.close(self._fd)
            raise

    def _watch(self, folder: str, follow: bool = False) -> int:
        """Watch one folder; a symlink is not followed (the walk does not follow it either) unless `follow`."""
        wd = int(_lib().add_watch(self._fd, os.fsencode(folder), _MASK | (0 if follow else _IN_DONT_FOLLOW)))
        if wd < 0:
            code = ctypes.get_errno()
            if code in (errno.ENOENT, errno.ENOTDIR):  # a symlink, or gone meanwhile (its parent's event says so)
                return -1
            raise Unwatchable(f"inotify_add_watch {folder}: {os.strerror(code)}")
        self._folders[wd] = folder
        if len(self._folders) > MAX_FOLDERS:
            raise Unwatchable(f"more than {MAX_FOLDERS} folders")
        return wd

    def _watch_tree(self, top: str, follow: bool = False) -> int:
        """Watch `top` and every folder under it (symlinked folders are not followed; git folders are not)."""
        first = self._watch(top, follow)
        for folder, names, _ in os.walk(top):
            names[:] = [name for name in names if name != ".git"]
            for name in names:
                self._watch(os.path.join(folder, name))
        return first

    def close(self) -> None:
        os.close(self._fd)

    def drain(self) -> None:
        """Read the queued events: `generation` moves on if there were any (`Unwatchable` when the watch broke)."""
        with self._lock:
            seen = False
            while True:
                try:
                    data = os.read(self._fd, 256 * 1024)
                except BlockingIOError:
                    break
                seen = True
                self._handle(data)
            if seen:
                self.generation += 1
                self._log.append((self.generation, frozenset(self._paths), self._structural))
                self._paths, self._structural = set(), False
                while sum(len(paths) for _, paths, _ in self._log) > MAX_LOGGED_PATHS:
                    self._forgotten = self._log.pop(0)[0]

    def since(self, generation: int) -> tuple[frozenset[str], bool] | None:
        """The paths events named after `generation` (up to now: the last drain: files, and folders made or
        removed), and whether a `.gitignore` or a `.git` was among them (then only a look at everything is
        right); None when that is no longer known."""
        with self._lock:
            if generation < self._forgotten:
                return None
            later = [entry for entry in self._log if entry[0] > generation]
            return frozenset().union(*(paths for _, paths, _ in later)), any(changed for _, _, changed in later)

    def _handle(self, data: bytes) -> None:
        offset = 0
        while offset < len(data):
            wd, mask, _, length = _EVENT.unpack_from(data, offset)
            name = data[offset + _EVENT.size : offset + _EVENT.size + length].rstrip(b"\0")
            offset += _EVENT.size + length
            if mask & _IN_Q_OVERFLOW:
                raise Unwatchable("the event queue overflowed")
            if wd == self._root_wd and mask & (_IN_DELETE_SELF | _IN_MOVE_SELF):
                raise Unwatchable("the root was removed or moved")
            folder = self._folders.get(wd)
            if mask & _IN_IGNORED:
                self._folders.pop(wd, None)
            if folder is None or name in (b".gitignore", b".git"):
                self._structural = True
            elif name:  # a file, or a folder made, moved or removed (the folder's own events name nothing)
                self._paths.add(os.path.join(folder, os.fsdecode(name)))
            if folder is not None and mask & _IN_ISDIR and mask & (_IN_CREATE | _IN_MOVED_TO):
                self._watch_tree(os.path.join(folder, os.fsdecode(name)))


_watched: dict[str, RootEvents] = {}
_unwatchable: dict[str, str] = {}  # why (said once in the log)
_registry_lock = threading.Lock()


def events(root: str) -> RootEvents | None:
    """The events under `root`, drained; watched from the first call on. None when the root cannot be watched.
    Blocking (a first call walks the root): call it in a worker thread.
    """
    key = root
    with _registry_lock:
        watched = _watched.get(key)
        if watched is None:
            if key in _unwatchable:
                return None
            try:
                watched = RootEvents(root)
            except (Unwatchable, OSError) as exc:
                _unwatchable[key] = str(exc)
                log.info("not watching %s for changes (every command looks at it): %s", root, exc)
                return None
            _watched[key] = watched
            while len(_watched) > MAX_ROOTS:
                _watched.pop(next(iter(_watched))).close()
    try:
        watched.drain()
    except (Unwatchable, OSError) as exc:
        log.info("stopped watching %s for changes: %s", root, exc)
        forget(key)  # watched again, from scratch, at the next call
        return None
    return watched


def forget(key: str) -> None:
    with _registry_lock:
        watched = _watched.pop(key, None)
        _unwatchable.pop(key, None)
    if watched is not None:
        watched.close()
