"""`fs/read_text_file` and `fs/write_text_file` served from this machine's disk, with an editor's semantics.

A read gives the file's text (UTF-8; bytes that are not are replaced) from `line` (1-based) for `limit`
lines, where lines end at "\\n" as editors count them (`str.splitlines` would also break at \\f, \\x85 ...).
A page is read line by line: the lines before it and after it are never held. A write is atomic: a temporary
file in the same folder, renamed over the target, keeping its mode, so a crash never leaves half a file.
Failures are the disk's own `OSError`s (`FileNotFoundError`, `IsADirectoryError`, `PermissionError` ...).
"""

from __future__ import annotations

import itertools
import os
import stat
import tempfile

import anyio

from ..kit.private import umask


def page(text: str, line: int | None, limit: int | None) -> str:
    """The lines of `text` from `line` (1-based) for `limit` lines; lines end at "\\n", which is kept."""
    if line is None and limit is None:
        return text
    lines = text.split("\n")
    kept = [part + "\n" for part in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    start = max((line or 1) - 1, 0)
    return "".join(kept[start : None if limit is None else start + limit])


def read_text(path: str, line: int | None = None, limit: int | None = None) -> str:
    with open(path, "rb") as handle:
        if line is None and limit is None:
            data = handle.read()
        else:
            start = max((line or 1) - 1, 0)
            # A binary file iterates in lines that end at b"\n", and "\n" is never part of another character.
            data = b"".join(itertools.islice(handle, start, None if limit is None else start + max(limit, 0)))
    return data.decode("utf-8", errors="replace")


def write_atomically(path: str, content: str) -> None:
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~umask()  # a new file gets what any other program would give it (mkstemp makes 600)
    fd, temporary = tempfile.mkstemp(prefix=".coder-agent-", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise


class LocalFiles:
    """The disk, with the `Client`'s file methods (`session_id` is not needed here)."""

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None
    ) -> str:
        return await anyio.to_thread.run_sync(read_text, path, line, limit)

    async def write_text_file(self, session_id: str, path: str, content: str) -> None:
        await anyio.to_thread.run_sync(write_atomically, path, content)
