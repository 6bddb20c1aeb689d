"""Reading and writing the user's files: through the editor when it offers to, else on the local disk.

Through the editor, reads see unsaved buffers and writes show up in its review of changes. On disk, writes
are atomic (a temporary file renamed over the target, keeping its mode) so a crash never leaves half a file.
"""

from __future__ import annotations

import os
import stat
import tempfile

import anyio

from .client import Client
from .errors import ClientError

BINARY_SNIFF_BYTES = 8192


class BinaryFileError(ValueError):
    """The file is not text."""


def looks_binary(data: bytes) -> bool:
    return b"\0" in data[:BINARY_SNIFF_BYTES]


def _write_atomically(path: str, content: str) -> None:
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    try:
        mode: int | None = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = None
    fd, temporary = tempfile.mkstemp(prefix=".coder-agent-", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise


def _sniff_binary(path: str) -> bool:
    with open(path, "rb") as handle:
        return looks_binary(handle.read(BINARY_SNIFF_BYTES))


def _read_local(path: str) -> str:
    with open(path, "rb") as handle:
        data = handle.read()
    if looks_binary(data):
        raise BinaryFileError(f"{path} is a binary file")
    return data.decode("utf-8", errors="replace")


class Files:
    def __init__(self, client: Client, session_id: str) -> None:
        self._client = client
        self._session_id = session_id

    @property
    def through_editor(self) -> bool:
        return self._client.capabilities.fs.read_text_file

    async def read_text(self, path: str, line: int | None = None, limit: int | None = None) -> str:
        """The file's text (from `line`, 1-based, for `limit` lines when given).

        Raises FileNotFoundError, IsADirectoryError, BinaryFileError or PermissionError.
        """
        target = anyio.Path(path)
        if await target.is_dir():
            raise IsADirectoryError(f"{path} is a directory")
        if self.through_editor:
            if await target.is_file() and await anyio.to_thread.run_sync(_sniff_binary, path):
                raise BinaryFileError(f"{path} is a binary file")
            try:
                # The editor may hold an unsaved buffer for a file that is not on disk yet: ask it first.
                return await self._client.read_text_file(self._session_id, path, line, limit)
            except ClientError as exc:
                if not await target.exists():
                    raise FileNotFoundError(f"{path} does not exist") from exc
                raise OSError(f"the editor could not read {path}: {exc.message}") from exc
        text = await anyio.to_thread.run_sync(_read_local, path)
        if line is None and limit is None:
            return text
        # Lines end at "\n" only, as editors count them (str.splitlines also breaks at \f, \x85, ...).
        lines = text.split("\n")
        lines = [part + "\n" for part in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
        start = max((line or 1) - 1, 0)
        end = None if limit is None else start + limit
        return "".join(lines[start:end])

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
        if self._client.capabilities.fs.write_text_file:
            await self._client.write_text_file(self._session_id, path, content)
        else:
            await anyio.to_thread.run_sync(_write_atomically, path, content)

    async def delete(self, path: str) -> None:
        # ACP has no delete method: the file goes from the local disk either way.
        await anyio.Path(path).unlink()
