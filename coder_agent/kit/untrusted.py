"""Reading a file that someone else's checkout names: only a regular file, only inside the roots, never too much.

A cloned repository decides what its paths are. `AGENTS.md -> /proc/self/fd/0` made the agent read its own stdin
(every request after it went unanswered), `-> /dev/zero` grew the process to the machine's memory, and a command
file linked to `~/.aws/credentials` sent that file to the model. So every file the agent reads on its own
initiative from the workspace goes through `read_capped`:

- the path is resolved (every link followed) and must lie inside one of the roots, when roots are given;
- it is opened without following a last link (one swapped in after the check fails the open), without blocking
  (a FIFO with no writer would block the open) and without becoming a controlling terminal;
- what was opened must be a regular file (not a pipe, a device, a socket or a folder), and on Linux it must
  still be inside the roots (`/proc/self/fd` names what the descriptor really is, after any swap of a folder);
- at most `cap` bytes are read, and the result says how large the file is, so the caller can say what it cut.

Standard library only: the early first call reads the project's instruction files before the runtime is in.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from typing import NamedTuple

_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
_CHUNK = 1 << 20


class Refused(OSError):
    """The file is not one the agent may read on its own: `str()` says why, for the user and the model."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(f"{path}: {why}")
        self.path = path
        self.why = why

    def __str__(self) -> str:
        return f"{self.path}: {self.why}"

    @property
    def reason(self) -> str:
        """`why` without its closing ": not read", for a caller that says "X was not read: <reason>" itself."""
        return self.why.removesuffix(": not read")


class Capped(NamedTuple):
    """At most `cap` bytes of a regular file (`data`), and the file's whole size when it was opened. (A named
    tuple, not a dataclass: the early stage reads the command files with it, and `dataclasses` costs ~10-50 ms
    of imports there.)"""

    data: bytes
    size: int

    @property
    def cut(self) -> bool:
        return len(self.data) < self.size

    def cut_note(self, path: str) -> str:
        """A line that says what was left out, for text shown to a person or the model ("" when nothing was)."""
        if not self.cut:
            return ""
        return f"[{path}: only the first {len(self.data):,} of its {self.size:,} bytes were read]"


def real_roots(roots: Sequence[str]) -> list[str]:
    return [os.path.realpath(root) for root in roots]


def is_inside(real_path: str, real_roots_: Sequence[str]) -> bool:
    """Whether an already resolved path is one of the resolved roots or below one."""
    return any(real_path == root or real_path.startswith(root.rstrip(os.sep) + os.sep) for root in real_roots_)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def kind_of(mode: int) -> str:
    """What a file of this mode is, in words ("a pipe", "a device" ...), for a caller's own refusal."""
    return _kind(mode)


def _opened_as(fd: int) -> str | None:
    """What the descriptor really names (Linux's `/proc/self/fd`), or None where that cannot be asked."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


def open_checked(path: str, roots: Sequence[str] | None = None) -> tuple[int, os.stat_result]:
    """An open descriptor on `path` and its stat, when it is a regular file inside `roots` (None: anywhere).

    Raises `Refused` when it is not one the agent may read, `OSError` (FileNotFoundError, ...) when it cannot be
    opened at all. The caller closes the descriptor.
    """
    real = os.path.realpath(path)
    inside = None if roots is None else real_roots(roots)
    if inside is not None and not is_inside(real, inside):
        shown = real if real != os.path.abspath(path) else "outside"
        raise Refused(path, f"it leads outside the project's folders ({shown}): not read")
    fd = os.open(real, _FLAGS)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Refused(path, f"it is {_kind(info.st_mode)}, not a regular file: not read")
        if inside is not None:
            opened = _opened_as(fd)
            if opened is not None and not is_inside(opened, inside):
                raise Refused(path, f"it leads outside the project's folders ({opened}): not read")
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def read_capped(path: str, cap: int, roots: Sequence[str] | None = None) -> Capped:
    """At most `cap` bytes of `path`, a regular file inside `roots` (None: anywhere, still a regular file).

    Raises `Refused` (not a regular file, or outside the roots) or the `OSError` of opening it.
    """
    fd, info = open_checked(path, roots)
    try:
        parts: list[bytes] = []
        left = cap + 1  # one byte more than kept: a file that grew since fstat is still seen as cut
        while left > 0:
            part = os.read(fd, min(left, _CHUNK))
            if not part:
                break
            parts.append(part)
            left -= len(part)
    finally:
        os.close(fd)
    data = b"".join(parts)
    return Capped(data[:cap], max(info.st_size, len(data)))
