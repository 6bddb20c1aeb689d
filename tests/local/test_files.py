"""Files on disk with an editor's semantics: 1-based pages of lines that end at "\n", atomic writes."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from coder_agent.local.files import LocalFiles, page, read_text, write_atomically

pytestmark = pytest.mark.anyio

MIXED = "one\r\ntwo\fstill two\nthree\x85still three\n\nfive, no newline"


@pytest.mark.parametrize(
    ("line", "limit", "expected"),
    [
        (None, None, MIXED),
        (1, 1, "one\r\n"),
        (2, 2, "two\fstill two\nthree\x85still three\n"),
        (4, None, "\nfive, no newline"),
        (None, 1, "one\r\n"),
        (5, 10, "five, no newline"),
        (6, 1, ""),
        (2, 0, ""),
    ],
)
def test_a_page_counts_lines_at_newlines_only_and_the_disk_agrees_with_a_buffer(
    tmp_path: Path, line: int | None, limit: int | None, expected: str
) -> None:
    path = tmp_path / "mixed.txt"
    path.write_bytes(MIXED.encode())
    assert page(MIXED, line, limit) == expected
    assert read_text(str(path), line, limit) == expected


def test_bytes_that_are_not_utf8_are_replaced(tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"caf\xe9\nok\n")
    assert read_text(str(path)) == "caf\ufffd\nok\n"
    assert read_text(str(path), 2, 1) == "ok\n"


def test_a_missing_file_or_a_directory_fail_as_the_disk_says(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_text(str(tmp_path / "missing.txt"))
    with pytest.raises(IsADirectoryError):
        read_text(str(tmp_path))


def test_a_write_replaces_the_file_whole_keeps_its_mode_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "script.sh"
    path.write_text("old\n")
    path.chmod(0o750)
    write_atomically(str(path), "new\r\nlines\n")
    assert path.read_bytes() == b"new\r\nlines\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o750
    assert os.listdir(tmp_path) == ["script.sh"]


async def test_the_client_methods_create_folders_and_read_back_what_they_wrote(tmp_path: Path) -> None:
    files = LocalFiles()
    path = str(tmp_path / "new" / "deep" / "file.txt")
    await files.write_text_file("sess", path, "a\nb\nc\n")
    assert await files.read_text_file("sess", path, 2, 1) == "b\n"
    assert await files.read_text_file("sess", path) == "a\nb\nc\n"


def test_a_new_file_gets_the_mode_the_umask_gives_and_an_existing_one_keeps_its_own(tmp_path: Path) -> None:
    import stat

    from coder_agent.local.files import write_atomically

    new, existing = tmp_path / "new.py", tmp_path / "run.sh"
    existing.write_text("echo\n")
    existing.chmod(0o750)
    old = os.umask(0o022)
    try:
        write_atomically(str(new), "x\n")
        write_atomically(str(existing), "echo hi\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE(new.stat().st_mode) == 0o644
    assert stat.S_IMODE(existing.stat().st_mode) == 0o750
