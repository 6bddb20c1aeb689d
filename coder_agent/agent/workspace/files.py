"""Reading and writing the user's files through the `Client`, for the tools: text files only, errors as `OSError`s.

The client serves the files (an editor sees unsaved buffers and reviews each change; the local disk writes
atomically). What is a file at all, and whether it is binary, is the disk's word: the client is asked for text.
"""

from __future__ import annotations

import os
import stat

import anyio

from ...kit.untrusted import kind_of, open_checked
from ..client import Client
from ..errors import ClientError

BINARY_SNIFF_BYTES = 8192


class BinaryFileError(ValueError):
    """The file is not text."""


def looks_binary(data: bytes) -> bool:
    return b"\0" in data[:BINARY_SNIFF_BYTES]


def is_binary_file(path: str) -> bool:
    """Whether the file on disk at `path` looks binary (blocking: run it in a thread). Opened without blocking:
    what is not a regular file (any more) is refused (`untrusted.Refused`, an `OSError`)."""
    fd, _ = open_checked(path)
    with os.fdopen(fd, "rb") as handle:
        return looks_binary(handle.read(BINARY_SNIFF_BYTES))


class Files:
    def __init__(self, client: Client, session_id: str) -> None:
        self._client = client
        self._session_id = session_id

    async def read_text(self, path: str, line: int | None = None, limit: int | None = None) -> str:
        """The file's text (from `line`, 1-based, for `limit` lines when given).

        Raises FileNotFoundError, IsADirectoryError, BinaryFileError or PermissionError.
        """
        target = anyio.Path(path)
        try:
            mode = (await target.stat()).st_mode
        except OSError:
            mode = None  # not on disk: an editor may still have it
        if mode is not None and stat.S_ISDIR(mode):
            raise IsADirectoryError(f"{path} is a directory")
        if mode is not None and not stat.S_ISREG(mode):
            # A pipe, a device or a socket (`README.md -> /dev/zero`, `-> /proc/self/fd/0` in someone else's
            # checkout) would block for ever, take the machine's memory or read the agent's own input.
            raise OSError(f"it is {kind_of(mode)}, not a regular file")
        if mode is not None and await anyio.to_thread.run_sync(is_binary_file, path):
            raise BinaryFileError(f"{path} is a binary file")
        try:
            # An editor may hold an unsaved buffer for a file that is not on disk yet: ask it first.
            return await self._client.read_text_file(self._session_id, path, line, limit)
        except ClientError as exc:
            if not await target.exists():
                raise FileNotFoundError(f"{path} does not exist") from exc
            raise OSError(f"the editor could not read {path}: {exc.message}") from exc

    async def read_text_or_none(self, path: str) -> str | None:
        """The whole file's text, or None when it does not exist.

        Existence is the disk's word: the editor is not asked about a file that is not there (some answer with an
        error, some with empty content, which would make a new file look like an emptied one).
        """
        if not await anyio.Path(path).exists():
            return None
        try:
            return await self.read_text(path)
        except FileNotFoundError:
            return None

    async def write_text(self, path: str, content: str) -> None:
        await self._client.write_text_file(self._session_id, path, content)

    async def delete(self, path: str) -> None:
        # ACP has no delete method: the file goes from the local disk either way.
        await anyio.Path(path).unlink()

    async def put_bytes(self, path: str, data: bytes | None) -> None:
        """Restore a file to `data` (None: delete it): text through the client, so an editor's buffer follows;
        a binary file on the disk directly."""
        if data is None:
            await self.delete(path)
            return
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is None or "\0" in text:
            await anyio.Path(path).parent.mkdir(parents=True, exist_ok=True)
            await anyio.Path(path).write_bytes(data)
        else:
            await self.write_text(path, text)
