"""Files a command makes or rewrites are seen at a bounded cost: a file past the cap is reported as changed, with its
size and no content; a link to outside the project or to a device is reported as a link and never followed;
counting the lines of a shuffled file never holds up the event loop; a command that writes many files is shown
and held only up to the bounds of a call and a turn."""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp.schema import AgentMessageChunk, ToolCallStart

from coder_agent.config.settings import Settings
from coder_agent.scripted.script import Reply, ToolCallStep
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.server_helpers import Run, session

pytestmark = pytest.mark.anyio

MB = 1024 * 1024


def sh(cwd: Path, script: str) -> None:
    subprocess.run(["/bin/sh", "-c", script], cwd=cwd, check=True, capture_output=True)


def commit_all(project: Path) -> None:
    sh(project, "git init -q 2>/dev/null; git add -A && git -c user.email=t@t -c user.name=t commit -qm files")


def bytes_read() -> int:
    """Bytes this process's threads have read through read() and the like (Linux). Not `/proc/self/io`: that
    counts the children it waited for too, and a command's own reads are not the agent's."""
    total = 0
    for thread in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{thread}/io") as io:
                total += next(int(line.split()[1]) for line in io if line.startswith("rchar:"))
        except (FileNotFoundError, ProcessLookupError):
            pass  # a thread that ended meanwhile
    return total


def command(text: str) -> Reply:
    return Reply.tool_calls([ToolCallStep(name="run_command", id="c1", arguments=json.dumps({"command": text}))])


async def command_turn(run: Run, srv: ScriptedModelServer, text: str) -> int:
    """A turn whose one call runs `text`, after one that runs `true` (so what the first command imports is in);
    the bytes this process read during it."""
    srv.enqueue(command("true"), Reply.text("warm"), command(text), Reply.text("done"))
    assert await run.prompt("warm up", timeout=60) == "end_turn"
    read_before = bytes_read()
    assert await run.prompt("do it", timeout=60) == "end_turn"
    return bytes_read() - read_before


async def run_command_turn(settings: Settings, srv: ScriptedModelServer, project: Path, text: str) -> list[Any]:
    async with session("bare", settings, project) as run:
        await command_turn(run, srv, text)
        return run.client.updates(run.session_id)


def change_report(updates: list[Any]) -> ToolCallStart:
    [report] = [u for u in updates if isinstance(u, ToolCallStart) and u.kind == "edit"]
    return report


def shown(report: ToolCallStart) -> list[tuple[str, str]]:
    """What the editor is shown of each changed file: ("diff", path) or ("text", the line)."""
    return [
        ("diff", block.path) if block.type == "diff" else ("text", block.content.text) for block in report.content or []
    ]


def model_heard(srv: ScriptedModelServer) -> str:
    return str([m for m in srv.requests[-1].body["messages"] if m["role"] == "tool"][-1]["content"])


def summary_note(updates: list[Any]) -> str:
    [note] = [u.content.text for u in updates if isinstance(u, AgentMessageChunk) and u.field_meta]
    return str(note).removeprefix("\n\n")


async def test_a_sparse_gigabyte_file_a_command_makes_is_reported_with_its_size_and_never_read(
    make_settings: Any, srv: ScriptedModelServer, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a\n")
    commit_all(workspace)
    with anyio.fail_after(60):
        async with session("bare", make_settings(default_mode="bypass"), workspace) as run:
            read = await command_turn(run, srv, "truncate -s 1G disk.img")
            updates = run.client.updates(run.session_id)
    assert read < 16 * MB, f"{read / MB:.0f} MB read to report a 1 GB file"
    image = workspace / "disk.img"
    assert shown(change_report(updates)) == [("text", f"{image}: created (1.0 GB: too large to read)")]
    assert model_heard(srv).endswith("Files changed by this call: disk.img (created; 1.0 GB: too large to read).")
    assert summary_note(updates) == "**Changed 1 file**\n- `disk.img` 1.0 GB: too large to read (created)"


async def test_files_past_the_cap_are_reported_with_their_size_and_no_content_and_one_under_it_can_be_undone(
    make_settings: Any, srv: ScriptedModelServer, workspace: Path
) -> None:
    """A tracked file of 6 MB rewritten (its earlier content is git's, past the cap too), a 40 MB file made, and a
    1 MB file rewritten: too large to show as a diff, small enough to keep for undo."""
    row = b"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n"  # 64 bytes
    (workspace / "table.csv").write_bytes(row * (6 * MB // len(row)))
    (workspace / "middle.txt").write_bytes(row * (MB // len(row)))
    commit_all(workspace)
    settings: Settings = make_settings(default_mode="bypass")
    script = "sed -i 's/^0/x/' table.csv middle.txt && head -c 40000000 /dev/zero | tr '\\0' y > forty.txt"
    async with session("bare", settings, workspace) as run:
        read = await command_turn(run, srv, script)
        updates = run.client.updates(run.session_id)
        await run.prompt("/undo")
    # the 1 MB file read twice (after the command, and at the end of the turn), and git's copy of it once
    assert read < 16 * MB, f"{read / MB:.0f} MB read"
    assert shown(change_report(updates)) == [
        ("text", f"{workspace / 'forty.txt'}: created (38.1 MB: too large to read)"),
        ("text", f"{workspace / 'middle.txt'}: modified (1.0 MB: too large to show)"),
        ("text", f"{workspace / 'table.csv'}: modified (6.0 MB: too large to read)"),
    ]
    assert model_heard(srv).endswith(
        "Files changed by this call: forty.txt (created; 38.1 MB: too large to read), middle.txt (modified),"
        " table.csv (modified; 6.0 MB: too large to read)."
    )
    assert summary_note(updates).splitlines()[1:] == [
        "- `forty.txt` 38.1 MB: too large to read (created)",
        "- `middle.txt` +16384 -16384",
        "- `table.csv` 6.0 MB: too large to read",
    ]
    # undo puts back the file under the cap; the others were never kept: left, as before
    assert (workspace / "middle.txt").read_bytes() == row * (MB // len(row))
    assert (workspace / "table.csv").read_bytes().startswith(b"x") and (workspace / "forty.txt").exists()


async def test_links_a_command_makes_to_outside_the_project_or_to_a_device_are_reported_and_never_followed(
    make_settings: Any, srv: ScriptedModelServer, workspace: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "home" / ".aws" / "credentials"
    secret.parent.mkdir(parents=True)
    secret.write_text("[default]\naws_secret_access_key = SECRET-KEY-DO-NOT-READ\n")
    (workspace / "a.txt").write_text("a\n")
    commit_all(workspace)
    script = f"ln -s {secret} creds && ln -s /dev/zero zero && ln -s a.txt alias"
    with anyio.fail_after(60):
        updates = await run_command_turn(make_settings(default_mode="bypass"), srv, workspace, script)
    assert shown(change_report(updates)) == [
        ("diff", str(workspace / "alias")),  # inside the project, to a regular file: read through
        ("text", f"{workspace / 'creds'}: created (a link to {secret}: not followed)"),
        ("text", f"{workspace / 'zero'}: created (a link to /dev/zero: not followed)"),
    ]
    wire = json.dumps([u.model_dump(mode="json") for u in updates]) + json.dumps([r.body for r in srv.requests])
    assert "SECRET-KEY" not in wire
    assert model_heard(srv).endswith(
        f"alias (created), creds (created; a link to {secret}: not followed),"
        " zero (created; a link to /dev/zero: not followed)."
    )


async def test_outside_git_too_a_big_file_and_a_link_to_a_secret_are_reported_and_not_read(
    make_settings: Any, srv: ScriptedModelServer, workspace: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "credentials"
    secret.write_text("aws_secret_access_key = SECRET-KEY-DO-NOT-READ\n")
    (workspace / "a.txt").write_text("a\n")
    script = f"ln -s {secret} creds && truncate -s 1G disk.img"
    with anyio.fail_after(60):
        async with session("bare", make_settings(default_mode="bypass"), workspace) as run:
            read = await command_turn(run, srv, script)
            updates = run.client.updates(run.session_id)
    assert read < 16 * MB, f"{read / MB:.0f} MB read to report a 1 GB file"
    assert shown(change_report(updates)) == [
        ("text", f"{workspace / 'creds'}: created (a link to {secret}: not followed)"),
        ("text", f"{workspace / 'disk.img'}: created (1.0 GB: too large to read)"),
    ]
    assert "SECRET-KEY" not in json.dumps([u.model_dump(mode="json") for u in updates])


async def test_a_shuffled_file_is_counted_without_holding_up_the_event_loop(
    make_settings: Any, srv: ScriptedModelServer, workspace: Path, tmp_path: Path
) -> None:
    """difflib is quadratic on a shuffled file (17 s on 400,000 lines): the loop must go on ticking meanwhile."""
    lines = [f"{number}\n" for number in range(400_000)]  # 2.6 MB
    (workspace / "numbers.txt").write_text("".join(lines))
    commit_all(workspace)
    random.Random(20).shuffle(lines)
    shuffled = tmp_path / "shuffled.txt"
    shuffled.write_text("".join(lines))
    longest_gap = 0.0
    done = anyio.Event()

    async def tick() -> None:
        nonlocal longest_gap
        last = anyio.current_time()
        while not done.is_set():
            await anyio.sleep(0.005)
            now = anyio.current_time()
            longest_gap, last = max(longest_gap, now - last), now

    srv.enqueue(command("true"), Reply.text("warm"), command(f"cp {shuffled} numbers.txt"), Reply.text("done"))
    with anyio.fail_after(90):
        async with session("bare", make_settings(default_mode="bypass"), workspace) as run:
            assert await run.prompt("warm up") == "end_turn"  # what the first command imports is in
            async with anyio.create_task_group() as group:
                group.start_soon(tick)
                assert await run.prompt("shuffle it", timeout=80) == "end_turn"
                done.set()
            updates = run.client.updates(run.session_id)
    assert longest_gap < 1.0, f"the event loop stood still for {longest_gap:.1f} s"
    [line] = summary_note(updates).splitlines()[1:]
    _, name, plus, minus = line.split()
    added, removed = int(plus[1:]), int(minus[1:])
    assert name == "`numbers.txt`" and 390_000 < added == removed < 400_000


async def test_a_command_that_writes_many_files_is_shown_and_held_only_up_to_the_turns_bounds(
    make_settings: Any, srv: ScriptedModelServer, workspace: Path
) -> None:
    """Twelve 400 KB text files (each small enough to show, together past the 4 MB of diffs one call shows), then
    thirty 3 MB ones (each small enough to read, together past the 64 MB a turn holds)."""
    (workspace / "a.txt").write_text("a\n")
    commit_all(workspace)
    script = (
        "for i in $(seq 10 21); do yes 'a line of text' | head -c 400000 > diff$i.txt; done;"
        " for i in $(seq 10 39); do yes 'a line of text' | head -c 3000000 > load$i.txt; done"
    )
    with anyio.fail_after(60):
        updates = await run_command_turn(make_settings(default_mode="bypass"), srv, workspace, script)
    notes = {}  # file name -> why it is listed rather than shown as a diff
    diffs = []
    for kind, what in shown(change_report(updates)):
        if kind == "diff":
            diffs.append(Path(what).name)
        else:
            path, note = what.split(": created (", 1)
            notes[Path(path).name] = note.rstrip(")")
    assert diffs == [f"diff{i}.txt" for i in range(10, 20)]
    assert {notes["diff20.txt"], notes["diff21.txt"]} == {"not shown: this call's diffs passed 4.0 MB"}
    assert {notes[f"load{i}.txt"] for i in range(10, 30)} == {"2.9 MB: too large to show"}
    held_no_more = "2.9 MB: not read, this turn holds 64.0 MB of changed files already"
    assert {notes[f"load{i}.txt"] for i in range(30, 40)} == {held_no_more}
    assert f"load39.txt (created; {held_no_more})" in model_heard(srv)
    summary = summary_note(updates).splitlines()  # the end of the turn reads them one at a time: all are counted
    assert summary[0] == "**Changed 42 files**" and all(line.split()[2].startswith("+") for line in summary[1:])
