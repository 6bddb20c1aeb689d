"""Taking a file a command changed: a regular file inside the roots is read up to the cap; anything else is said
for what it is, never read through."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from coder_agent.agent.workspace.file_content import ABSENT, Content, take

pytestmark = pytest.mark.anyio


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


async def taken(path: Path, project: Path, cap: int = 1024) -> Content:
    """`take`, in a thread given up on after 5 s: a FIFO opened for reading would block it for good."""
    with anyio.fail_after(5):
        return await anyio.to_thread.run_sync(take, str(path), [str(project)], cap, abandon_on_cancel=True)


async def test_a_regular_file_under_the_cap_is_read_whole_and_a_missing_one_is_absent(project: Path) -> None:
    (project / "a.txt").write_bytes(b"one\ntwo\n")
    assert await taken(project / "a.txt", project) == Content(b"one\ntwo\n", size=8)
    assert await taken(project / "gone.txt", project) == ABSENT
    assert await taken(project / "a.txt" / "below", project) == ABSENT


async def test_a_file_past_the_cap_is_not_read_and_its_size_is_said(project: Path) -> None:
    (project / "disk.img").touch()
    os.truncate(project / "disk.img", 3 * 1024**3)  # sparse: nothing on the disk
    got = await taken(project / "disk.img", project)
    assert (got.data, got.size, got.withheld) == (None, 3 * 1024**3, "3.0 GB: too large to read")
    (project / "small.bin").write_bytes(b"x" * 1025)
    assert (await taken(project / "small.bin", project)).withheld == "1 KB: too large to read"


async def test_links_to_a_secret_a_device_a_pipe_or_nothing_are_said_to_be_links_and_not_followed(
    project: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "credentials"
    secret.write_text("key = SECRET\n")
    os.mkfifo(project / "fifo")
    links = {"creds": str(secret), "zero": "/dev/zero", "stdin": "/proc/self/fd/0", "pipe": "fifo", "dead": "nope"}
    for name, target in links.items():
        (project / name).symlink_to(target)
    for name, target in links.items():
        got = await taken(project / name, project)
        assert (got.data, got.withheld) == (None, f"a link to {target}: not followed"), name


async def test_a_link_to_a_regular_file_inside_the_project_is_read_through(project: Path) -> None:
    (project / "AGENTS.md").write_text("be brief\n")
    (project / "CLAUDE.md").symlink_to("AGENTS.md")
    assert (await taken(project / "CLAUDE.md", project)).data == b"be brief\n"


async def test_what_is_no_regular_file_or_lies_outside_through_a_folder_link_is_refused(
    project: Path, tmp_path: Path
) -> None:
    os.mkfifo(project / "fifo")
    (project / "folder").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "credentials").write_text("key = SECRET\n")
    (project / "linked").symlink_to(outside)
    assert (await taken(project / "fifo", project)).withheld == "it is a pipe, not a regular file: not read"
    assert (await taken(project / "folder", project)).withheld == "it is a folder, not a regular file: not read"
    refused = await taken(project / "linked" / "credentials", project)
    assert refused.data is None and f"({outside / 'credentials'})" in str(refused.withheld)
    # without roots (a file the user let an edit write outside them), a regular file anywhere is read
    got = await anyio.to_thread.run_sync(take, str(project / "linked" / "credentials"))
    assert got.data == b"key = SECRET\n"
