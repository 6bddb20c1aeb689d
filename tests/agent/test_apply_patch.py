"""apply_patch as a tool: what it shows before running, what it writes, and that a reject writes nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from coder_agent.acp.schema import DiffContent, ToolCallLocation
from coder_agent.agent.tools.apply_patch import ApplyPatch
from coder_agent.agent.tools.base import ToolContext, ToolError
from tests.support.file_fixtures import EditorClient, call, prepare, written

pytestmark = pytest.mark.anyio
tool = ApplyPatch()

TWO_FILES = (
    "--- a/src/a.py\n+++ b/src/a.py\n@@ -1,3 +1,3 @@\n import os\n-X = 1\n+X = 2\n print(X)\n"
    "--- a/b.txt\n+++ b/b.txt\n@@ -2,2 +2,3 @@\n two\n three\n+four\n"
)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("import os\nX = 1\nprint(X)\n")
    (tmp_path / "b.txt").write_text("one\ntwo\nthree\n")
    return tmp_path


async def test_a_multi_file_patch_shows_every_file_then_writes_them(any_ctx: ToolContext, tree: Path) -> None:
    intent = await prepare(tool, any_ctx, patch=TWO_FILES)
    assert (intent.title, intent.kind, intent.effect) == ("Patch 2 files", "edit", "edit")
    assert intent.locations == [
        ToolCallLocation(path=str(tree / "src" / "a.py"), line=2),
        ToolCallLocation(path=str(tree / "b.txt"), line=4),
    ]
    assert [(d.path, d.new_text) for d in intent.content if isinstance(d, DiffContent)] == [
        (str(tree / "src" / "a.py"), "import os\nX = 2\nprint(X)\n"),
        (str(tree / "b.txt"), "one\ntwo\nthree\nfour\n"),
    ]
    result = await tool.run(tool.parse({"patch": TWO_FILES}), intent, any_ctx)
    assert result.output == "updated src/a.py; updated b.txt"
    assert written(any_ctx, tree / "src" / "a.py") == "import os\nX = 2\nprint(X)\n"
    assert written(any_ctx, tree / "b.txt") == "one\ntwo\nthree\nfour\n"


async def test_through_the_editor_patched_files_go_to_the_editor(
    editor_client: EditorClient, editor_ctx: ToolContext, tree: Path
) -> None:
    await call(tool, editor_ctx, patch=TWO_FILES)
    assert [path for path, _ in editor_client.writes] == [str(tree / "src" / "a.py"), str(tree / "b.txt")]
    assert (tree / "b.txt").read_text() == "one\ntwo\nthree\n"


async def test_one_file_is_named_in_the_title(any_ctx: ToolContext, tree: Path) -> None:
    patch = TWO_FILES.split("--- a/b.txt")[0]
    assert (await prepare(tool, any_ctx, patch=patch)).title == "Patch src/a.py"


async def test_a_new_file_is_created_with_a_null_old_text(any_ctx: ToolContext, tree: Path) -> None:
    patch = "--- /dev/null\n+++ b/docs/new.md\n@@ -0,0 +1,2 @@\n+# New\n+text\n"
    intent = await prepare(tool, any_ctx, patch=patch)
    assert intent.title == "Create docs/new.md"
    [diff] = intent.content
    assert isinstance(diff, DiffContent) and diff.model_dump(by_alias=True)["oldText"] is None
    await call(tool, any_ctx, patch=patch)
    assert written(any_ctx, tree / "docs" / "new.md") == "# New\ntext\n"


async def test_a_patch_that_only_deletes_is_a_delete(any_ctx: ToolContext, tree: Path) -> None:
    patch = "--- a/b.txt\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-one\n-two\n-three\n"
    intent = await prepare(tool, any_ctx, patch=patch)
    assert (intent.title, intent.kind) == ("Delete b.txt", "delete")
    assert [(c.path, c.new_text) for c in intent.changes] == [(str(tree / "b.txt"), None)]
    result = await tool.run(tool.parse({"patch": patch}), intent, any_ctx)
    assert result.output == "deleted b.txt"
    assert not (tree / "b.txt").exists()


async def test_absolute_paths_are_accepted(any_ctx: ToolContext, tree: Path) -> None:
    target = tree / "b.txt"
    patch = f"--- {target}\n+++ {target}\n@@\n three\n+four\n"
    intent = await prepare(tool, any_ctx, patch=patch)
    assert intent.changes[0].path == str(target)


async def test_a_rejected_hunk_is_reported_and_nothing_is_written(any_ctx: ToolContext, tree: Path) -> None:
    patch = TWO_FILES + "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-uno\n+1\n"
    with pytest.raises(ToolError) as caught:
        await call(tool, any_ctx, patch=patch)
    message = str(caught.value)
    assert message.startswith("The patch was not applied, and no file was changed:\n")
    assert "b.txt: hunk 1 of 1 (@@ -1 +1 @@) was rejected: context not found." in message
    assert "It looked for:\n    |uno" in message
    assert (tree / "src" / "a.py").read_text() == "import os\nX = 1\nprint(X)\n"
    assert (tree / "b.txt").read_text() == "one\ntwo\nthree\n"
    if isinstance(any_ctx.editor, EditorClient):
        assert any_ctx.editor.writes == []


async def test_ambiguous_context_is_rejected(any_ctx: ToolContext, tree: Path) -> None:
    (tree / "dup.txt").write_text("a\nb\na\nb\n")
    with pytest.raises(ToolError, match=r"ambiguous: its context was found at lines 1 and 3"):
        await prepare(tool, any_ctx, patch="--- dup.txt\n+++ dup.txt\n@@\n a\n-b\n+B\n")


async def test_a_file_changed_since_the_patch_was_prepared_is_not_overwritten(
    bare_ctx: ToolContext, tree: Path
) -> None:
    args = tool.parse({"patch": TWO_FILES})
    intent = await tool.prepare(args, bare_ctx)
    (tree / "b.txt").write_text("changed meanwhile\n")
    with pytest.raises(ToolError, match=r"b.txt changed since this edit was prepared"):
        await tool.run(args, intent, bare_ctx)
    assert (tree / "b.txt").read_text() == "changed meanwhile\n"


async def test_binary_files_are_not_patched(bare_ctx: ToolContext, tree: Path) -> None:
    (tree / "img.bin").write_bytes(b"\0\0")
    with pytest.raises(ToolError, match=r"img.bin is a binary file"):
        await prepare(tool, bare_ctx, patch="--- img.bin\n+++ img.bin\n@@\n-a\n+b\n")


async def test_text_that_is_not_a_patch_is_refused(any_ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"The patch was not applied: no file changes found"):
        await prepare(tool, any_ctx, patch="please change X to 2")


async def test_crlf_files_are_patched_in_place_on_disk(bare_ctx: ToolContext, tree: Path) -> None:
    (tree / "win.txt").write_bytes(b"a\r\nb\r\n")
    os.chmod(tree / "win.txt", 0o600)
    await call(tool, bare_ctx, patch="--- win.txt\n+++ win.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n")
    assert (tree / "win.txt").read_bytes() == b"a\r\nc\r\n"
    assert (tree / "win.txt").stat().st_mode & 0o777 == 0o600
