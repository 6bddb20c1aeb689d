"""The agent's data on disk is the user's alone: folders 700, files 600.

Sessions hold prompts, code and command output; logs hold much the same. Other local users must not read
them. The process umask is left alone (commands inherit it): each folder and file is created with its mode,
and an existing one of ours that others may read is tightened. Folders that already exist above the data
folder are never touched. Standard library only.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)

FOLDER_MODE = 0o700
FILE_MODE = 0o600
_OTHERS = 0o077  # group and world bits


def tighten(path: Path) -> None:
    """Take group and world access from `path` when we own it; nothing when it is missing or someone else's."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return
    mode = stat.S_IMODE(info.st_mode)
    if info.st_uid == os.geteuid() and mode & _OTHERS:
        os.chmod(path, mode & ~_OTHERS)
        log.info("%s was readable by other users; now %o", path, mode & ~_OTHERS)


def private_folder(path: Path) -> Path:
    """Make `path` exist as a folder only we can enter: the levels we create are 700, and `path` is tightened."""
    missing: list[Path] = []
    level = path
    while not level.exists() and level.parent != level:
        missing.append(level)
        level = level.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=FOLDER_MODE)
        except FileExistsError:  # made meanwhile by another agent process
            pass
    if not path.is_dir():
        raise NotADirectoryError(f"{path} is not a folder")
    tighten(path)
    return path


def open_private(path: Path, flags: int) -> int:
    """`os.open` of a file that is created 600 (and tightened if it already was there and others could read it)."""
    fd = os.open(path, flags | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
    try:
        info = os.fstat(fd)
        mode = stat.S_IMODE(info.st_mode)
        if info.st_uid == os.geteuid() and mode & _OTHERS:
            os.fchmod(fd, mode & ~_OTHERS)
            log.info("%s was readable by other users; now %o", path, mode & ~_OTHERS)
    except OSError:
        os.close(fd)
        raise
    return fd


def private_file(path: Path) -> Path:
    """Make `path` exist as a file only we can read (600), without changing its content."""
    os.close(open_private(path, os.O_RDWR))
    return path


def umask() -> int:
    """The process's umask, read without changing it (Linux; `os.umask` can only be read by setting it, which
    races with other threads creating files); else the common 022."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022
