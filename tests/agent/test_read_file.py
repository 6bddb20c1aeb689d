"""read_file: numbered pages of text through the editor or from disk, and clear refusals of everything else."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from coder_agent.acp.schema import ContentToolCallContent, TextContent, ToolCallLocation
from coder_agent.agent.tools.base import ToolContext, ToolError
from coder_agent.agent.tools.read_file import ReadFile
from tests.support.file_fixtures import EditorClient, call, prepare
from tests.support.hostile_checkout import lay_out

pytestmark = pytest.mark.anyio
tool = ReadFile()


def summary(content: list[object]) -> str:
    [item] = content
    assert isinstance(item, ContentToolCallContent) and isinstance(item.content, TextContent)
    return item.content.text


async def test_lines_are_numbered_like_cat_n(any_ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("first\n\tindented\nlast\n")
    result = await call(tool, any_ctx, path="a.txt")
    assert result.output == "     1\tfirst\n     2\t\tindented\n     3\tlast"
    assert summary(result.content) == "Read 3 lines"


async def test_a_page_is_read_from_offset_for_limit_lines(any_ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    result = await call(tool, any_ctx, path="a.txt", offset=3, limit=2)
    assert result.output.splitlines()[:2] == ["     3\tline 3", "     4\tline 4"]
    assert "read on with offset=5" in result.output
    assert summary(result.content) == "Read lines 3-4"


async def test_the_last_page_has_no_note(any_ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    result = await call(tool, any_ctx, path="a.txt", offset=9)
    assert result.output == "     9\tline 9\n    10\tline 10"


async def test_pages_go_through_the_editor_with_line_and_limit(
    editor_client: EditorClient, editor_ctx: ToolContext, tmp_path: Path
) -> None:
    path = tmp_path / "a.txt"
    path.write_text("on disk\n")
    editor_client.buffers[str(path)] = "unsaved 1\nunsaved 2\nunsaved 3\n"
    result = await call(tool, editor_ctx, path="a.txt", offset=2, limit=1)
    assert result.output.startswith("     2\tunsaved 2")
    assert editor_client.reads == [(str(path), 2, 2)]  # one line more than asked, to learn whether more follow


async def test_a_long_file_is_cut_at_2000_lines_with_the_total_and_how_to_page(
    any_ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "big.txt").write_text("".join(f"{n}\n" for n in range(1, 2501)))
    result = await call(tool, any_ctx, path="big.txt")
    lines = result.output.splitlines()
    assert lines[1999] == "  2000\t2000"
    assert "big.txt has 2500 lines; this shows lines 1-2000" in result.output
    assert "offset=2001" in result.output


async def test_very_long_lines_are_truncated_with_a_marker(any_ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "min.js").write_text("x" * 5000 + "\nshort\n")
    result = await call(tool, any_ctx, path="min.js")
    first, second = result.output.splitlines()
    assert first == "     1\t" + "x" * 2000 + "… [line truncated: 5000 characters]"
    assert second == "     2\tshort"


async def test_crlf_line_breaks_are_not_shown(any_ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"one\r\ntwo\r\n")
    assert (await call(tool, any_ctx, path="w.txt")).output == "     1\tone\n     2\ttwo"


async def test_an_empty_file_is_said_to_be_empty(any_ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_text("")
    result = await call(tool, any_ctx, path="empty.txt")
    assert result.output == "empty.txt is empty."


async def test_an_offset_past_the_end_says_how_long_the_file_is(any_ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("1\n2\n3\n")
    with pytest.raises(ToolError, match=r"a.txt has 3 lines; offset 7 is past its end"):
        await call(tool, any_ctx, path="a.txt", offset=7)


async def test_binary_files_are_refused(bare_ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    with pytest.raises(ToolError, match=r"logo.png is a binary file"):
        await call(tool, bare_ctx, path="logo.png")


async def test_binary_files_are_refused_through_the_editor_too(editor_ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    with pytest.raises(ToolError, match=r"logo.png is a binary file"):
        await call(tool, editor_ctx, path="logo.png")


async def test_a_directory_is_refused_with_a_pointer_to_list_dir(any_ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    with pytest.raises(ToolError, match=r"src is a directory.*list_dir"):
        await call(tool, any_ctx, path="src")


async def test_a_missing_file_is_refused(any_ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"nope.txt does not exist"):
        await call(tool, any_ctx, path="nope.txt")


async def test_the_intent_names_the_file_and_range_and_points_at_the_line(any_ctx: ToolContext, tmp_path: Path) -> None:
    whole = await prepare(tool, any_ctx, path="src/a.py")
    assert (whole.title, whole.kind, whole.effect) == ("Read src/a.py", "read", "read")
    assert whole.locations == [ToolCallLocation(path=str(tmp_path / "src" / "a.py"), line=1)]
    page = await prepare(tool, any_ctx, path=str(tmp_path / "src" / "a.py"), offset=10, limit=5)
    assert page.title == "Read src/a.py (lines 10-14)"
    assert page.locations[0].line == 10
    assert (await prepare(tool, any_ctx, path="/etc/hosts", offset=3)).title == "Read /etc/hosts (from line 3)"


async def test_a_pipe_or_a_device_is_refused_at_once_and_never_read(any_ctx: ToolContext, tmp_path: Path) -> None:
    """A checkout's `README.md` may be a FIFO or a link to /dev/zero or to the agent's own stdin: reading one
    would block for ever, take the machine's memory, or steal the protocol's input."""
    fifo = lay_out(["readme-fifo"], tmp_path, tmp_path / "fakehome").project / "README.md"
    valve = threading.Timer(10, _release, [fifo])  # a regression blocks on the FIFO: this ends the test then
    valve.start()
    try:
        started = time.monotonic()
        with pytest.raises(ToolError) as refused:
            await call(tool, any_ctx, path="README.md")
        took = time.monotonic() - started
    finally:
        valve.cancel()
    assert str(refused.value) == "could not read README.md: it is a pipe, not a regular file"
    assert took < 5


def _release(fifo: Path) -> None:
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass
