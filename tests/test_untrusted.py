"""Reading files a checkout names: regular files inside the roots only, never more than the cap."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from coder_agent.kit.untrusted import Refused, read_capped


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


def test_a_regular_file_inside_the_root_is_read_whole(project: Path) -> None:
    (project / "AGENTS.md").write_text("be brief\n")
    got = read_capped(str(project / "AGENTS.md"), 1024, [str(project)])
    assert (got.data, got.size, got.cut, got.cut_note("AGENTS.md")) == (b"be brief\n", 9, False, "")


def test_a_file_past_the_cap_is_cut_and_says_so(project: Path) -> None:
    (project / "big.md").write_bytes(b"x" * 5000)
    got = read_capped(str(project / "big.md"), 1000, [str(project)])
    assert (len(got.data), got.size, got.cut) == (1000, 5000, True)
    assert got.cut_note("big.md") == "[big.md: only the first 1,000 of its 5,000 bytes were read]"


def test_a_link_to_the_processs_own_stdin_is_refused_without_reading(project: Path) -> None:
    read_end, write_end = os.pipe()
    try:
        (project / "AGENTS.md").symlink_to(f"/proc/self/fd/{read_end}")
        with pytest.raises(Refused, match="outside the project"):
            read_capped(str(project / "AGENTS.md"), 1024, [str(project)])
        with pytest.raises(OSError):  # without roots: the pipe is no regular file (or no file at all)
            read_capped(str(project / "AGENTS.md"), 1024)
    finally:
        os.close(read_end)
        os.close(write_end)


def test_a_device_is_refused_even_where_no_roots_are_given(project: Path) -> None:
    (project / "AGENTS.md").symlink_to("/dev/zero")
    with pytest.raises(Refused, match="a device, not a regular file"):
        read_capped(str(project / "AGENTS.md"), 1024)


def test_a_fifo_with_no_writer_is_refused_at_once(project: Path) -> None:
    os.mkfifo(project / "AGENTS.md")
    with pytest.raises(Refused, match="a pipe"):
        read_capped(str(project / "AGENTS.md"), 1024, [str(project)])


def test_a_folder_is_refused(project: Path) -> None:
    (project / "AGENTS.md").mkdir()
    with pytest.raises(Refused, match="a folder"):
        read_capped(str(project / "AGENTS.md"), 1024, [str(project)])


def test_a_link_to_a_secret_outside_the_roots_is_refused(project: Path, tmp_path: Path) -> None:
    secret = tmp_path / "home" / ".aws" / "credentials"
    secret.parent.mkdir(parents=True)
    secret.write_text("[default]\naws_secret_access_key = hunter2\n")
    (project / "x.md").symlink_to(secret)
    with pytest.raises(Refused, match="outside the project") as refused:
        read_capped(str(project / "x.md"), 1024, [str(project)])
    assert "hunter2" not in str(refused.value)


def test_a_link_that_stays_inside_the_roots_is_followed(project: Path, tmp_path: Path) -> None:
    other = tmp_path / "other-root"
    other.mkdir()
    (other / "notes.md").write_text("shared")
    (project / "docs").mkdir()
    (project / "docs" / "guide.md").write_text("guide")
    (project / "AGENTS.md").symlink_to("docs/guide.md")
    (project / "NOTES.md").symlink_to(other / "notes.md")
    assert read_capped(str(project / "AGENTS.md"), 100, [str(project)]).data == b"guide"
    assert read_capped(str(project / "NOTES.md"), 100, [str(project), str(other)]).data == b"shared"


def test_a_root_that_is_itself_a_link_still_holds_its_files(tmp_path: Path, project: Path) -> None:
    (project / "AGENTS.md").write_text("hi")
    linked = tmp_path / "linked"
    linked.symlink_to(project)
    assert read_capped(str(linked / "AGENTS.md"), 100, [str(linked)]).data == b"hi"


def test_a_sibling_folder_sharing_the_roots_prefix_is_outside(tmp_path: Path, project: Path) -> None:
    sibling = tmp_path / "project-evil"
    sibling.mkdir()
    (sibling / "x").write_text("no")
    (project / "x").symlink_to(sibling / "x")
    with pytest.raises(Refused):
        read_capped(str(project / "x"), 100, [str(project)])


def test_a_missing_file_is_the_usual_error(project: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_capped(str(project / "nope.md"), 100, [str(project)])
