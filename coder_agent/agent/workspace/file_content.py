"""What a file holds, as the agent may take it on its own: its bytes up to a cap, else its size or why not.

A command decides what the files it leaves are. A 1.2 GB sparse file read whole cost +4.8 GiB; `x -> /dev/zero`
read whole never ends; `x -> ~/.aws/credentials` would send a secret to the editor and the model. So the files a
command changed are taken through `take`: only a regular file inside the roots after every link is followed is
read (`untrusted.py`; a link to anything else is reported as the link it is, its target said, never followed),
and a file past the cap is not read at all: its size is what is known of it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from ...kit.untrusted import Refused, read_capped

MAX_TAKEN_BYTES = 4 * 1024 * 1024  # what undo keeps (`checkpoints.MAX_KEPT_BYTES`); past it, a file is not read


def size_text(size: int) -> str:
    """`size` bytes the way a person reads it: "512 bytes", "12 KB", "38.1 MB", "1.0 GB" (units of 1,024)."""
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size // 1024} KB"
    if size < 1024**3:
        return f"{size / 1024 / 1024:.1f} MB"
    return f"{size / 1024**3:.1f} GB"


@dataclass(frozen=True)
class Content:
    """A file's state as the agent took it: absent, its bytes (`data`), or there but not taken (`withheld` says
    why, for the user and the model: "1.0 GB: too large to read", "a link to /dev/zero: not followed")."""

    data: bytes | None = None
    exists: bool = True
    size: int | None = None  # bytes, when known
    withheld: str | None = None
    mode: int | None = field(default=None, compare=False)  # a file's permission bits, when known
    link: str | None = None  # a symbolic link's target, when the file is one (and was not followed)

    @property
    def known(self) -> bool:
        """Whether what the file holds is known: it is absent, or its bytes were taken."""
        return not self.exists or self.data is not None

    def same_as(self, other: Content) -> bool:
        """Known to hold the same (both absent, the same bytes, or links to the same place); a withheld side is
        never known to be the same. Modes are not compared."""
        if not self.exists or not other.exists:
            return self.exists == other.exists
        if self.link is not None or other.link is not None:
            return self.link == other.link
        return self.data is not None and self.data == other.data


ABSENT = Content(exists=False)
UNKNOWN = Content(withheld="its content before is not known")


TOO_LARGE = "too large to read"


def too_large(size: int, why: str = TOO_LARGE) -> Content:
    """A file past the cap: its size, and `why` it was not read."""
    return Content(size=size, withheld=f"{size_text(size)}: {why}")


def of_bytes(data: bytes | None, cap: int = MAX_TAKEN_BYTES) -> Content:
    """Bytes the agent has anyway (an edit's text): kept when at most `cap`, else only their size."""
    if data is None:
        return ABSENT
    return Content(data, size=len(data)) if len(data) <= cap else too_large(len(data))


def link_content(target: str) -> Content:
    """A symbolic link, as the agent keeps it: its target, never followed."""
    return Content(size=len(os.fsencode(target)), withheld=f"a link to {target}: not followed", link=target)


def take(
    path: str,
    roots: Sequence[str] | None = None,
    cap: int = MAX_TAKEN_BYTES,
    past_cap: str = TOO_LARGE,
    follow: bool = True,
) -> Content:
    """What the file at `path` holds now, read only when it is (or links to) a regular file of at most `cap` bytes
    inside `roots` (None: anywhere); `past_cap` says why a larger one was not. `follow=False`: a link is the link
    (its target), whatever it leads to. Blocking: run it in a worker thread."""
    try:
        info = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return ABSENT
    except OSError as exc:
        return Content(withheld=f"it could not be looked at: {exc.strerror or exc}")
    link = stat.S_ISLNK(info.st_mode)
    if link and not follow:
        return link_content(_target(path))
    mode = stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else None
    if not link and stat.S_ISREG(info.st_mode) and info.st_size > cap:
        return replace(too_large(info.st_size, past_cap), mode=mode)  # not opened: a size past the cap says enough
    try:
        capped = read_capped(path, cap, roots)
    except OSError as exc:  # `Refused` too
        if link:  # to outside the roots, to a device or a pipe, to nothing: the link is what there is
            return Content(size=info.st_size, withheld=f"a link to {_target(path)}: not followed")
        if isinstance(exc, FileNotFoundError | NotADirectoryError):
            return ABSENT
        if isinstance(exc, Refused):
            return Content(withheld=exc.why)
        return Content(withheld=f"it could not be read: {exc.strerror or exc}")
    if capped.cut:  # larger than the cap (a link's target, or a file that grew since the look)
        return replace(too_large(capped.size, past_cap), mode=mode)
    return Content(capped.data, size=len(capped.data), mode=mode)


def _target(link: str) -> str:
    try:
        return os.readlink(link)
    except OSError:
        return "somewhere"
