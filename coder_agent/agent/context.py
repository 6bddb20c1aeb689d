"""A prompt's content blocks -> the user message the model sees; linked files read through the client, capped.

A linked file named inside the session's roots must stay inside them once its links are followed: the user
picked `notes.txt` in their project, not the `~/.aws/credentials` a cloned repository made it a link to. Such a
file is not included; the model gets a note saying where it leads. Linking a file outside the roots by its own
path is the user's explicit choice, and is honoured (a regular file, under the cap, not binary).
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import unquote, urlparse

import anyio

from ..acp.schema import (
    AudioContent,
    BlobResourceContents,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
)
from ..kit.untrusted import Refused, is_inside, open_checked, real_roots
from ..llm.messages import ImagePart, TextPart, UserMessage, UserPart
from .client import Client
from .errors import ClientError, InvalidInput
from .workspace.files import BINARY_SNIFF_BYTES, looks_binary

log = logging.getLogger(__name__)

MAX_LINKED_FILE_BYTES = 256 * 1024
FIRST_PAGE_LINES = 1000  # a linked file is read through the client a page of lines at a time
MAX_PAGE_LINES = 20_000
INVALID_PARAMS = -32602  # what Zed answers for a read past the end of a file


class TooLarge(Exception):
    """A linked file over `MAX_LINKED_FILE_BYTES`: the model is told how to read it instead."""


class LeadsOutside(Exception):
    """A linked file named inside the roots that is a link (or under one) to a file outside them."""

    def __init__(self, real: str) -> None:
        super().__init__(real)
        self.real = real


def file_path_of(uri: str) -> str | None:
    """The absolute local path of a `file://` URI, else None."""
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        path = unquote(parsed.path)
        return path if Path(path).is_absolute() else None
    if not parsed.scheme and Path(uri).is_absolute():
        return uri
    return None


def _framed(uri: str, text: str) -> str:
    return f'<context uri="{uri}">\n{text}\n</context>'


def outside_note(path: str, real: str) -> str:
    return (
        f"[linked file {path} not included: it is a link to {real}, outside the project's folders. The user may "
        "link that file itself to share it; do not read it otherwise.]"
    )


def too_large_note(path: str) -> str:
    return (
        f"[linked file {path} not included: it is larger than {MAX_LINKED_FILE_BYTES // 1024} KiB. "
        "Read the parts you need with the read_file tool (offset and limit), or search it with grep.]"
    )


async def _read_paged(client: Client, session_id: str, path: str) -> str:
    """The client's text of `path` (an editor's unsaved edits included), read a page of lines at a time.

    ACP's `fs/read_text_file` has no byte limit, only lines: each page is sized from the lines' length so far
    to what is left of the cap, so no more than the cap and about one page is ever held. Raises `TooLarge`.
    """
    parts: list[str] = []
    size = 0
    line, page = 1, FIRST_PAGE_LINES
    while True:
        try:
            text = await client.read_text_file(session_id, path, line, page)
        except ClientError as exc:
            if line > 1 and exc.code == INVALID_PARAMS:  # a page past the end: the last one was full
                break
            raise
        size += len(text.encode("utf-8", errors="surrogatepass"))
        if size > MAX_LINKED_FILE_BYTES:
            raise TooLarge(path)
        parts.append(text)
        # str.splitlines breaks at more characters than any editor does, so this never sees an end too soon.
        lines = len(text.splitlines())
        if lines < page or text.count("\n") > page:  # the end; or an editor that ignores limit sent it all
            break
        line += page
        left = MAX_LINKED_FILE_BYTES - size
        page = max(1, min(MAX_PAGE_LINES, int(left * (line - 1) / max(size, 1)) + 1))
    return "".join(parts)


def _check_on_disk(path: str, roots: Sequence[str]) -> None:
    """Refuse what the disk already says cannot be included: a link out of the roots, too large, binary, not a
    file at all (blocking: run it in a thread).

    A file that is not on disk may still be in an editor's buffers: the client is asked for it regardless.
    """
    inside = real_roots(roots)
    if is_inside(os.path.abspath(path), [*(os.path.abspath(root) for root in roots), *inside]):
        real = os.path.realpath(path)
        if not is_inside(real, inside):
            raise LeadsOutside(real)
    try:
        info = os.stat(path)
    except OSError:
        return
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
    if not stat.S_ISREG(info.st_mode):  # a device or a pipe could be endless
        raise ValueError(f"{path} is not a regular file")
    if info.st_size > MAX_LINKED_FILE_BYTES:
        raise TooLarge(path)
    try:
        fd, _ = open_checked(path)  # never blocks: a pipe swapped in since the stat is refused, not waited on
    except Refused as exc:
        raise ValueError(str(exc)) from None
    try:
        head = os.read(fd, BINARY_SNIFF_BYTES)
    finally:
        os.close(fd)
    if looks_binary(head):
        raise ValueError(f"{path} is a binary file")


async def _read_linked_file(client: Client, session_id: str, path: str, roots: Sequence[str]) -> str:
    """Read a linked file through the client, capped. Never a binary dump."""
    try:
        await anyio.to_thread.run_sync(_check_on_disk, path, roots)
        return await _read_paged(client, session_id, path)
    except ClientError as exc:
        raise OSError(f"{path}: {exc.message}") from exc
    except OSError as exc:
        raise OSError(f"{path}: {exc.strerror or exc}") from exc


async def _link_part(client: Client, session_id: str, block: ResourceLink, roots: Sequence[str]) -> TextPart:
    path = file_path_of(block.uri)
    if path is None:
        return TextPart(text=f"[linked resource: {block.name} <{block.uri}>]")
    try:
        text = await _read_linked_file(client, session_id, path, roots)
    except LeadsOutside as exc:
        log.warning("the linked file %s was not included: it is a link to %s, outside the roots", path, exc.real)
        return TextPart(text=outside_note(path, exc.real))
    except TooLarge:
        return TextPart(text=too_large_note(path))
    except (OSError, ValueError) as exc:
        return TextPart(text=f"[linked file {path} could not be included: {exc}]")
    return TextPart(text=_framed(block.uri, text))


async def user_message_from_prompt(
    blocks: Sequence[ContentBlock], client: Client, session_id: str, roots: Sequence[str]
) -> UserMessage:
    """The user message of a prompt; `roots` are the session's folders (see the module's docstring)."""
    parts: list[UserPart] = []
    for block in blocks:
        if isinstance(block, TextContent):
            parts.append(TextPart(text=block.text))
        elif isinstance(block, ResourceLink):
            parts.append(await _link_part(client, session_id, block, roots))
        elif isinstance(block, EmbeddedResource):
            resource = block.resource
            if isinstance(resource, BlobResourceContents):
                mime = resource.mime_type or "application/octet-stream"
                parts.append(TextPart(text=f"[binary resource {resource.uri} ({mime}) not shown]"))
            else:
                parts.append(TextPart(text=_framed(resource.uri, resource.text)))
        elif isinstance(block, ImageContent):
            parts.append(ImagePart(data=block.data, mime_type=block.mime_type))
        elif isinstance(block, AudioContent):
            parts.append(TextPart(text=f"[audio clip ({block.mime_type}) not supported; ignored]"))
    if not parts:
        raise InvalidInput("Invalid params for session/prompt: prompt is empty")
    return UserMessage(parts=parts)
