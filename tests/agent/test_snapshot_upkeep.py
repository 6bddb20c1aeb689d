"""The shadows stay small: collected once objects pile up (never under a command that is running), removed with
the last session that names their root; two processes snapshotting one root share its shadow safely."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import PROTOCOL_VERSION

from coder_agent.agent.workspace import snapshot_upkeep, snapshots
from coder_agent.agent.workspace.changes import Watch
from coder_agent.agent.workspace.shadow_repo import shadow_folder
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.driving import delete_session
from tests.support.inproc import inproc_agent

pytestmark = pytest.mark.anyio


def sh(cwd: Path, script: str) -> None:
    subprocess.run(["/bin/sh", "-c", script], cwd=cwd, check=True, capture_output=True)


def size(folder: Path) -> int:
    """What the folder takes on the disk (a small file takes a block)."""
    return sum(path.stat().st_blocks * 512 for path in folder.rglob("*") if path.is_file())


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    root.mkdir()
    sh(root, 'for i in $(seq 200); do printf "$i\\n" > f$i.txt; done')
    return root


async def snapshot(home: Path, root: Path) -> snapshots.Snapshot:
    return await anyio.to_thread.run_sync(snapshots.snapshot, home, str(root))


async def test_a_shadow_that_piled_up_objects_is_collected_unless_a_command_is_running(
    tree: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    for round_ in range(7):  # 200 files changed each time: 200 loose objects a snapshot
        sh(tree, f'for i in $(seq 200); do printf "$i {round_}\\n" > f$i.txt; done')
        await snapshot(home, tree)
    repo = snapshots.repo_of(home, str(tree))
    loose, _ = repo.count_objects()
    assert loose > snapshot_upkeep.MAX_LOOSE
    held = snapshot_upkeep.pin(repo)  # a command runs between its two snapshots, here or in another process
    assert not await anyio.to_thread.run_sync(snapshot_upkeep.maintain, repo)
    snapshot_upkeep.unpin(held)
    before = size(repo.git_dir)
    assert await anyio.to_thread.run_sync(snapshot_upkeep.maintain, repo)
    assert repo.count_objects()[0] == 0 and size(repo.git_dir) < before / 10
    last = await snapshot(home, tree)
    fresh = await snapshot(tmp_path / "fresh", tree)
    assert last.tree == fresh.tree  # what the index names was kept


async def test_deleting_the_last_session_of_a_folder_removes_its_snapshots(
    make_settings: Any, srv: ScriptedModelServer, tmp_path: Path
) -> None:
    settings = make_settings(default_mode="bypass")
    one, two = tmp_path / "one", tmp_path / "two"
    for folder in (one, two):
        folder.mkdir()
        (folder / "a.txt").write_text("a\n")
    async with inproc_agent(settings) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        ids = {}
        for folder in (one, two, two):
            ids[folder] = (await agent.conn.new_session(cwd=str(folder), mcp_servers=[])).session_id
            await anyio.to_thread.run_sync(snapshots.snapshot, settings.home, str(folder))
        shadows = {folder: shadow_folder(settings.home, str(folder)) for folder in (one, two)}
        assert all(shadow.is_dir() for shadow in shadows.values())
        await delete_session(agent, ids[one])
        await delete_session(agent, ids[two])  # another session of `two` remains
    assert not shadows[one].exists() and shadows[two].is_dir()


SNAPSHOTTER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from coder_agent.agent.workspace.snapshots import snapshot
    home, root = Path(sys.argv[1]), sys.argv[2]
    for round_ in range(15):
        (Path(root) / "theirs.txt").write_text(f"{round_}\\n")
        snapshot(home, root)
    """
)


async def test_two_processes_snapshotting_one_root_share_its_shadow_safely(tree: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    other = await anyio.open_process([sys.executable, "-c", SNAPSHOTTER, str(home), str(tree)])
    async with other:
        for round_ in range(15):
            watch = Watch([str(tree)], home)
            await watch.start()
            sh(tree, f"printf '{round_}\\n' > ours.txt")
            assert "ours.txt" in [path.rsplit("/", 1)[-1] for path in (seen.path for seen in await watch.changes())]
            watch.close()
        with anyio.fail_after(60):
            assert await other.wait() == 0
    repo = snapshots.repo_of(home, str(tree))
    repo.run("fsck", "--no-dangling")
    assert (await snapshot(home, tree)).tree == (await snapshot(tmp_path / "fresh", tree)).tree
