"""Putting a file back as a checkpoint kept it: only inside the session's folders, never through a link.

Undo writes where a turn wrote, long after: by then a folder on the way may be a link to elsewhere, or the file
a link the user (or a command) put there. So every write here goes through the folder opened first and checked
(on Linux, `/proc/self/fd` names what the descriptor really is: it must lie inside the roots), and every name in
it is handled without following a link: a file is written to a temporary name beside it and renamed over it
(a link there is replaced, never written through), with its exact mode set before it appears; a link is made
the same way; a deletion unlinks the name itself. A file whose folder is gone gets its folders back.

A text file that exists goes through the editor when one serves files (`Files`), so its buffer follows; its
mode is then set here. Blocking parts run in a worker thread.
"""

from __future__ import annotations

import itertools
import os
import stat
from collections.abc import Sequence

import anyio

from ...kit.private import umask
from ...kit.untrusted import is_inside, real_roots
from ...store.checkpoints import Version
from .file_content import MAX_TAKEN_BYTES, Content, take
from .files import Files, looks_binary

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_counter = itertools.count()


class RestoreRefused(OSError):
    """The file is not one undo may write: `str()` says why."""


def _opened_as(fd: int) -> str | None:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


class Restore:
    """Reads and writes the files of a session's folders (`roots`) for undo."""

    def __init__(self, roots: Sequence[str], files: Files | None = None) -> None:
        self.roots = [os.path.abspath(root) for root in roots]
        self._real = real_roots(self.roots)
        self._files = files

    def refusal(self, path: str) -> str | None:
        """Why undo may not touch `path` (None: it may)."""
        if not is_inside(os.path.abspath(path), self.roots):
            return "it is outside the session's folders now (" + ", ".join(self.roots) + "): not touched"
        folder = _existing(os.path.dirname(os.path.abspath(path)))
        real = os.path.realpath(folder)
        if not is_inside(real, self._real):
            return f"a folder on its way leads outside the session's folders now ({real}): not written through"
        return None

    async def now(self, path: str) -> Content:
        """What `path` holds now (a link as the link; an editor's unsaved buffer over the disk's text)."""
        content = await anyio.to_thread.run_sync(lambda: take(path, None, MAX_TAKEN_BYTES, follow=False))
        if self._files is None or content.data is None or looks_binary(content.data):
            return content
        try:
            text = content.data.decode("utf-8")
            shown = await self._files.read_text(path)
        except (UnicodeDecodeError, OSError):
            return content
        if shown == text:
            return content
        return Content(shown.encode("utf-8"), size=len(shown.encode("utf-8")), mode=content.mode)

    async def put(self, path: str, target: Version, data: bytes | None, now: Content) -> None:
        """Make `path` what `target` says (`data`: its bytes, or a link's target). Raises `OSError`
        (`RestoreRefused` when it would be written outside the roots)."""
        if target.state == "absent":
            if now.exists:
                await anyio.to_thread.run_sync(self._at, path, False, _unlink)
            return
        assert data is not None
        if target.state == "link":
            await anyio.to_thread.run_sync(self._at, path, True, lambda fd, name: _make_link(fd, name, data))
            return
        if now.exists and now.link is None and now.data == data:  # only its mode changed
            if target.mode is not None and now.mode != target.mode:
                await anyio.to_thread.run_sync(self._at, path, False, lambda fd, name: _chmod(fd, name, target.mode))
            return
        text = _text(data)
        if self._files is not None and text is not None and now.exists and now.link is None and now.data is not None:
            await anyio.to_thread.run_sync(self._at, path, False, lambda fd, name: None)  # the check alone
            await self._files.write_text(path, text)
            if target.mode is not None:
                await anyio.to_thread.run_sync(self._at, path, False, lambda fd, name: _chmod(fd, name, target.mode))
            return
        await anyio.to_thread.run_sync(self._at, path, True, lambda fd, name: _write(fd, name, data, target.mode))

    def _at(self, path: str, create: bool, act: object) -> None:
        """Open the folder of `path` (checked, made when `create`), and `act(folder_fd, name)` in it."""
        why = self.refusal(path)
        if why is not None:
            raise RestoreRefused(why)
        folder, name = os.path.split(os.path.abspath(path))
        fd = self._open_folder(folder, create)
        try:
            act(fd, name)  # type: ignore[operator]
        finally:
            os.close(fd)

    def _open_folder(self, folder: str, create: bool) -> int:
        missing: list[str] = []
        existing = folder
        while not os.path.lexists(existing):
            existing, name = os.path.split(existing)
            missing.append(name)
        if missing and not create:
            raise FileNotFoundError(f"{folder} does not exist")
        fd = os.open(existing, _DIR_FLAGS)
        try:
            opened = _opened_as(fd) or os.path.realpath(existing)
            if not is_inside(opened, self._real):
                raise RestoreRefused(f"{existing} leads outside the session's folders ({opened}): not written through")
            for name in reversed(missing):
                try:
                    os.mkdir(name, 0o777, dir_fd=fd)
                except FileExistsError:
                    pass
                deeper = os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
                os.close(fd)
                fd = deeper
        except BaseException:
            os.close(fd)
            raise
        return fd


def _existing(folder: str) -> str:
    while not os.path.lexists(folder) and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    return folder


def _text(data: bytes) -> str | None:
    if looks_binary(data):
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _unlink(folder: int, name: str) -> None:
    os.unlink(name, dir_fd=folder)


def _temporary(name: str) -> str:
    return f".{name}.coder-agent-undo-{os.getpid()}-{next(_counter)}"


def _write(folder: int, name: str, data: bytes, mode: int | None) -> None:
    if mode is None:  # not recorded: the file's own, or what a new file gets
        try:
            info = os.stat(name, dir_fd=folder, follow_symlinks=False)
            mode = stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else None
        except FileNotFoundError:
            pass
        mode = mode if mode is not None else 0o666 & ~umask()
    temporary = _temporary(name)
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=folder)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fchmod(fd, mode)  # before it has its name: a 600 secret is never readable by others
        finally:
            os.close(fd)
        os.rename(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        try:
            os.unlink(temporary, dir_fd=folder)
        except OSError:
            pass
        raise


def _make_link(folder: int, name: str, target: bytes) -> None:
    temporary = _temporary(name)
    os.symlink(os.fsdecode(target), temporary, dir_fd=folder)
    try:
        os.rename(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        os.unlink(temporary, dir_fd=folder)
        raise


def _chmod(folder: int, name: str, mode: int | None) -> None:
    if mode is None:
        return
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder)
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            os.fchmod(fd, mode)
    finally:
        os.close(fd)
