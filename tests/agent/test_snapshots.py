"""A root's snapshot on its own: the modes most of a tree's files have are not copied file by file (a tree made
under a umask of 002 is all 664 and 775), every other mode is still exact; a root whose pass failed is not passed
over again at every command; a root that is gone is a clear error."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import anyio
import pytest

from coder_agent.agent.workspace import snapshot_pass, snapshots
from coder_agent.agent.workspace.changes import Watch
from coder_agent.agent.workspace.shadow_repo import ShadowError

pytestmark = pytest.mark.anyio


def sh(cwd: Path, script: str) -> None:
    subprocess.run(["/bin/sh", "-c", script], cwd=cwd, check=True, capture_output=True)


async def snapshot(home: Path, root: Path) -> snapshots.Snapshot:
    return await anyio.to_thread.run_sync(snapshots.snapshot, home, str(root))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def shared(tmp_path: Path) -> Path:
    """A tree made under a umask of 002: plain files 664, scripts 775, and a few of other modes."""
    root = tmp_path / "shared"
    root.mkdir()
    sh(root, 'for i in $(seq 40); do printf "$i\\n" > f$i.txt; done && chmod 664 f*.txt')
    sh(root, "printf '#!/bin/sh\\n' > a.sh && printf '#!/bin/sh\\n' > b.sh && chmod 775 a.sh b.sh")
    sh(root, "printf 's\\n' > secret && chmod 600 secret && printf 'p\\n' > plain && chmod 644 plain")
    return root


async def test_the_modes_most_files_have_are_not_kept_file_by_file(shared: Path, home: Path) -> None:
    taken = await snapshot(home, shared)
    assert taken.defaults == (0o664, 0o775)
    assert dict(taken.modes) == {"secret": 0o600, "plain": 0o644}


async def test_under_other_defaults_every_mode_comes_back_exact_and_a_mode_change_alone_is_seen(
    shared: Path, home: Path
) -> None:
    watch = Watch([str(shared)], home)
    await watch.start()
    sh(shared, "chmod 644 f1.txt && chmod 664 plain && rm secret a.sh && chmod 700 b.sh")
    found = {
        os.path.basename(seen.path): (seen.kind, seen.before.mode, seen.after.mode) for seen in await watch.changes()
    }
    assert found == {
        "f1.txt": ("modified", 0o664, 0o644),
        "plain": ("modified", 0o644, 0o664),
        "secret": ("deleted", 0o600, None),
        "a.sh": ("deleted", 0o775, None),
        "b.sh": ("modified", 0o775, 0o700),
    }


async def test_a_root_whose_pass_failed_is_not_passed_over_again_for_a_while(
    shared: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshot_pass, "MAX_FILES", 40)
    with pytest.raises(ShadowError, match="more than 40"):
        await snapshot(home, shared)
    sh(shared, "rm f*.txt")  # it would fit now, but the failure stands until RETRY_AFTER has passed
    with pytest.raises(ShadowError, match="more than 40"):
        await snapshot(home, shared)
    monkeypatch.setattr(snapshots, "RETRY_AFTER", 0.0)
    taken = await snapshot(home, shared)
    assert (taken.mode_of("secret", False), taken.mode_of("plain", False), taken.mode_of("a.sh", True)) == (
        0o600,
        0o644,
        0o775,
    )


async def test_a_root_that_is_gone_is_a_clear_error(tmp_path: Path, home: Path) -> None:
    gone = tmp_path / "gone"
    with pytest.raises(ShadowError, match="is not a folder"):
        await snapshot(home, gone)
