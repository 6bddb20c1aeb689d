"""write_file and edit_file: the diff they prepare, where the write goes, and errors that help the model."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from coder_agent.acp.schema import DiffContent, ToolCallLocation
from coder_agent.agent.tools.apply_patch import ApplyPatch
from coder_agent.agent.tools.base import Tool, ToolContext, ToolError
from coder_agent.agent.tools.edit_file import EditFile
from coder_agent.agent.tools.read_file import ReadFile
from coder_agent.agent.tools.write_file import WriteFile
from tests.support.file_fixtures import EditorClient, call, prepare, written

pytestmark = pytest.mark.anyio
write = WriteFile()
edit = EditFile()


# --- write_file ------------------------------------------------------------------------------------------------------


async def test_writing_a_new_file_creates_it_with_a_null_old_text(any_ctx: ToolContext, tmp_path: Path) -> None:
    intent = await prepare(write, any_ctx, path="pkg/new.py", content="x = 1\n")
    target = str(tmp_path / "pkg" / "new.py")
    assert (intent.title, intent.kind, intent.effect) == ("Create pkg/new.py", "edit", "edit")
    assert intent.locations == [ToolCallLocation(path=target)]
    [diff] = intent.content
    assert isinstance(diff, DiffContent)
    assert diff.model_dump(by_alias=True)["oldText"] is None
    result = await write.run(write.parse({"path": "pkg/new.py", "content": "x = 1\n"}), intent, any_ctx)
    assert result.output == "created pkg/new.py"
    assert written(any_ctx, tmp_path / "pkg" / "new.py") == "x = 1\n"


async def test_writing_an_existing_file_shows_the_old_and_new_text(any_ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("old\n")
    intent = await prepare(write, any_ctx, path="a.txt", content="new\n")
    assert intent.title == "Write a.txt"
    assert [(c.old_text, c.new_text) for c in intent.changes] == [("old\n", "new\n")]
    await call(write, any_ctx, path="a.txt", content="new\n")
    assert written(any_ctx, tmp_path / "a.txt") == "new\n"


async def test_through_the_editor_the_write_goes_to_the_editor_not_the_disk(
    editor_client: EditorClient, editor_ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("old\n")
    await call(write, editor_ctx, path="a.txt", content="new\n")
    assert editor_client.writes == [(str(tmp_path / "a.txt"), "new\n")]
    assert (tmp_path / "a.txt").read_text() == "old\n"


async def test_on_bare_disk_the_write_is_atomic_and_keeps_the_mode(bare_ctx: ToolContext, tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o751)
    await call(write, bare_ctx, path="run.sh", content="#!/bin/sh\necho hi\n")
    assert script.read_text() == "#!/bin/sh\necho hi\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o751
    assert os.listdir(tmp_path) == ["run.sh"]  # no temporary file left behind


async def test_a_crlf_file_keeps_its_line_breaks(any_ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"a\r\nb\r\n")
    intent = await prepare(write, any_ctx, path="w.txt", content="a\nc\n")
    assert intent.changes[0].new_text == "a\r\nc\r\n"


async def test_binary_files_and_directories_are_not_overwritten(bare_ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "data.bin").write_bytes(b"\0\1\2")
    (tmp_path / "src").mkdir()
    with pytest.raises(ToolError, match=r"data.bin is a binary file"):
        await prepare(write, bare_ctx, path="data.bin", content="text")
    with pytest.raises(ToolError, match=r"src is a directory"):
        await prepare(write, bare_ctx, path="src", content="text")


async def test_a_file_changed_since_the_call_was_prepared_is_not_overwritten(
    any_ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("v1\n")
    args = write.parse({"path": "a.txt", "content": "mine\n"})
    intent = await write.prepare(args, any_ctx)
    (tmp_path / "a.txt").write_text("someone else's\n")
    with pytest.raises(ToolError, match=r"a.txt changed since this edit was prepared"):
        await write.run(args, intent, any_ctx)
    assert (tmp_path / "a.txt").read_text() == "someone else's\n"


# --- edit_file -------------------------------------------------------------------------------------------------------

SOURCE = "def f():\n    return 1\n\n\ndef g():\n    return 1\n"


async def test_a_unique_match_is_replaced_and_located(any_ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    old, new = "def g():\n    return 1", "def g():\n    return 2"
    intent = await prepare(edit, any_ctx, path="m.py", old_string=old, new_string=new)
    assert (intent.title, intent.kind) == ("Edit m.py", "edit")
    assert intent.locations == [ToolCallLocation(path=str(tmp_path / "m.py"), line=5)]
    assert intent.changes[0].new_text == "def f():\n    return 1\n\n\ndef g():\n    return 2\n"
    await call(edit, any_ctx, path="m.py", old_string=old, new_string=new)
    assert written(any_ctx, tmp_path / "m.py") == intent.changes[0].new_text


async def test_no_match_says_so(any_ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    with pytest.raises(ToolError, match=r"old_string not found in m.py\. Read the file again"):
        await prepare(edit, any_ctx, path="m.py", old_string="def h():", new_string="def k():")


async def test_a_match_that_differs_in_whitespace_is_pointed_out(any_ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    with pytest.raises(ToolError) as caught:
        await prepare(edit, any_ctx, path="m.py", old_string="def g():\n  return  1", new_string="def g(): ...")
    message = str(caught.value)
    assert "old_string not found in m.py" in message
    assert "differs only in whitespace or indentation is at line 5" in message
    assert "     5\tdef g():\n     6\t    return 1\n" in message


async def test_several_matches_need_more_context_or_replace_all(any_ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    with pytest.raises(ToolError, match=r"occurs 2 times in m.py \(at lines 2, 6\).*replace_all"):
        await prepare(edit, any_ctx, path="m.py", old_string="return 1", new_string="return 0")


async def test_replace_all_replaces_every_match(any_ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    intent = await prepare(edit, any_ctx, path="m.py", old_string="return 1", new_string="return 0", replace_all=True)
    assert intent.changes[0].new_text == SOURCE.replace("return 1", "return 0")
    assert intent.locations[0].line == 2


async def test_an_empty_old_string_creates_a_missing_file(any_ctx: ToolContext, tmp_path: Path) -> None:
    intent = await prepare(edit, any_ctx, path="new.md", old_string="", new_string="# Title\n")
    assert intent.title == "Create new.md"
    assert [(c.old_text, c.new_text) for c in intent.changes] == [(None, "# Title\n")]
    await call(edit, any_ctx, path="new.md", old_string="", new_string="# Title\n")
    assert written(any_ctx, tmp_path / "new.md") == "# Title\n"


async def test_an_empty_old_string_does_not_overwrite_an_existing_file(any_ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    with pytest.raises(ToolError, match=r"m.py already exists"):
        await prepare(edit, any_ctx, path="m.py", old_string="", new_string="x")


async def test_editing_a_missing_file_or_changing_nothing_is_refused(any_ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"gone.py does not exist"):
        await prepare(edit, any_ctx, path="gone.py", old_string="a", new_string="b")
    with pytest.raises(ToolError, match=r"the same"):
        await prepare(edit, any_ctx, path="gone.py", old_string="a", new_string="a")


async def test_a_crlf_file_is_matched_with_lf_and_stays_crlf(any_ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    intent = await prepare(edit, any_ctx, path="w.txt", old_string="one\ntwo\n", new_string="1\n2\n")
    assert intent.changes[0].new_text == "1\r\n2\r\nthree\r\n"


# --- descriptions ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("tool", [ReadFile(), WriteFile(), EditFile(), ApplyPatch()], ids=lambda tool: tool.name)
def test_each_tool_has_a_description_and_described_arguments(tool: Tool[Any]) -> None:
    spec = tool.spec()["function"]
    assert spec["name"] == tool.name
    assert 5 <= len(spec["description"].splitlines()) <= 25
    assert "$" not in spec["description"]
    assert spec["parameters"]["properties"]
    for name, prop in spec["parameters"]["properties"].items():
        assert prop.get("description"), f"{tool.name}.{name} has no description"
