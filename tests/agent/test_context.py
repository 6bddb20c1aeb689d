"""Linked files (`resource_link` prompt blocks) in the user message: capped, read by the editor or from disk."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest

from coder_agent.acp.schema import ResourceLink
from coder_agent.agent.context import MAX_LINKED_FILE_BYTES, user_message_from_prompt
from coder_agent.agent.errors import ClientError
from coder_agent.llm.messages import TextPart
from coder_agent.local.fill_in import FillIn
from tests.support.file_fixtures import SESSION, BareClient, EditorClient

pytestmark = pytest.mark.anyio


class MeteredEditor(EditorClient):
    """Counts what the editor sends back; answers a read past the end as Zed does (invalid params)."""

    def __init__(self, ignores_paging: bool = False) -> None:
        super().__init__()
        self.bytes_sent = 0
        self.ignores_paging = ignores_paging

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None
    ) -> str:
        if self.ignores_paging:
            line = limit = None
        text = await super().read_text_file(session_id, path, line, limit)
        if line is not None and line > 1 and not text:
            raise ClientError(f"Attempting to read beyond the end of the file, line {line}", -32602)
        self.bytes_sent += len(text.encode())
        return text


async def linked(client: EditorClient | BareClient, path: Path, roots: Sequence[Path] = ()) -> str:
    link = ResourceLink(uri=path.as_uri(), name=path.name)
    folders = [str(root) for root in roots]
    async with anyio.create_task_group() as tasks:
        message = await user_message_from_prompt([link], FillIn(client, tasks), SESSION, folders)  # type: ignore[arg-type]
    [part] = message.parts
    assert isinstance(part, TextPart)
    return part.text


def numbered_lines(count: int, width: int = 40) -> str:
    return "".join(f"{n:0{width - 1}d}\n" for n in range(count))


async def test_a_huge_unsaved_buffer_is_not_included_and_never_read_whole(tmp_path: Path) -> None:
    editor = MeteredEditor()
    path = tmp_path / "huge.log"
    editor.buffers[str(path)] = numbered_lines(80_000)  # 3.2 MB, only in the editor
    text = await linked(editor, path)
    assert "larger than 256 KiB" in text and "read_file tool" in text and str(path) in text
    assert editor.bytes_sent <= MAX_LINKED_FILE_BYTES + 64 * 1024


async def test_a_file_just_under_the_cap_comes_through_the_editor_whole_and_in_order(tmp_path: Path) -> None:
    editor = MeteredEditor()
    path = tmp_path / "mixed.txt"
    lines = [
        f"{n} " + "x" * (n % 97) + ("\f" if n % 500 == 0 else "") + ("\r\n" if n % 7 else "\n") for n in range(4000)
    ]
    content = "".join(lines) + "no newline at the end"
    assert MAX_LINKED_FILE_BYTES - 80_000 < len(content.encode()) <= MAX_LINKED_FILE_BYTES
    editor.buffers[str(path)] = content
    assert await linked(editor, path) == f'<context uri="{path.as_uri()}">\n{content}\n</context>'
    assert len(editor.reads) > 1  # it was paged


async def test_a_file_of_exactly_full_pages_ends_at_the_editors_past_the_end_error(tmp_path: Path) -> None:
    editor = MeteredEditor()
    path = tmp_path / "even.txt"
    content = numbered_lines(2000, width=8)
    editor.buffers[str(path)] = content
    assert await linked(editor, path) == f'<context uri="{path.as_uri()}">\n{content}\n</context>'


async def test_an_editor_that_ignores_line_and_limit_still_gives_the_file_once(tmp_path: Path) -> None:
    editor = MeteredEditor(ignores_paging=True)
    path = tmp_path / "small.txt"
    content = numbered_lines(3000, width=10)
    editor.buffers[str(path)] = content
    assert await linked(editor, path) == f'<context uri="{path.as_uri()}">\n{content}\n</context>'


async def test_a_large_file_on_disk_gets_the_same_note(tmp_path: Path) -> None:
    path = tmp_path / "big.csv"
    path.write_text(numbered_lines(10_000))
    text = await linked(BareClient(), path)
    assert "larger than 256 KiB" in text and "read_file tool" in text


@pytest.mark.parametrize("profile", ["editor", "bare"])
async def test_a_binary_file_or_a_device_is_never_included_whichever_side_serves_files(
    tmp_path: Path, profile: str
) -> None:
    binary = tmp_path / "image.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    for path, why in ((binary, "is a binary file"), (Path("/dev/zero"), "is not a regular file")):
        client = MeteredEditor() if profile == "editor" else BareClient()
        with anyio.fail_after(5):
            text = await linked(client, path)
        assert text == f"[linked file {path} could not be included: {path} {why}]"
        assert isinstance(client, BareClient) or client.reads == []
