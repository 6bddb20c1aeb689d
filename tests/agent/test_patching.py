"""The patch parser and applier on their own: text in, text out, every reject explained."""

from __future__ import annotations

import pytest
from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

from coder_agent.agent.workspace.patching import FileResult, PatchError, apply_patch, parse_patch

LINES = "".join(f"line {n}\n" for n in range(1, 21))


def apply(patch: str, files: dict[str, str | None]) -> dict[str, str | None]:
    return {result.path: result.new_text for result in apply_patch(parse_patch(patch), files)}


def rejected(patch: str, files: dict[str, str | None]) -> str:
    with pytest.raises(PatchError) as caught:
        apply_patch(parse_patch(patch), files)
    return str(caught.value)


def test_a_hunk_at_its_stated_line_is_applied_and_located() -> None:
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -4,3 +4,3 @@\n line 4\n-line 5\n+LINE 5\n line 6\n"
    [result] = apply_patch(parse_patch(patch), {"f.txt": LINES})
    assert result == FileResult("f.txt", LINES, LINES.replace("line 5\n", "LINE 5\n"), line=5)


def test_several_files_and_hunks_in_one_patch() -> None:
    patch = (
        "diff --git a/one.txt b/one.txt\n--- a/one.txt\n+++ b/one.txt\n"
        "@@ -1,2 +1,2 @@\n-line 1\n+first\n line 2\n"
        "@@ -18,3 +18,4 @@\n line 18\n line 19\n line 20\n+line 21\n"
        "diff --git a/two.txt b/two.txt\n--- a/two.txt\n+++ b/two.txt\n"
        "@@ -1 +1 @@\n-hello\n+goodbye\n"
    )
    new = apply(patch, {"one.txt": LINES, "two.txt": "hello\n"})
    assert new == {"one.txt": "first\n" + LINES.removeprefix("line 1\n") + "line 21\n", "two.txt": "goodbye\n"}


def test_new_files_are_created_from_dev_null() -> None:
    patch = "--- /dev/null\n+++ b/src/new.py\n@@ -0,0 +1,2 @@\n+import os\n+print(os.sep)\n"
    [result] = apply_patch(parse_patch(patch), {"src/new.py": None})
    assert (result.path, result.old_text, result.new_text) == ("src/new.py", None, "import os\nprint(os.sep)\n")


def test_creating_a_file_that_exists_is_refused() -> None:
    patch = "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+x\n"
    assert "a.txt: the patch creates it (--- /dev/null) but it already exists" in rejected(patch, {"a.txt": "y\n"})


def test_deleting_a_file_with_or_without_hunks() -> None:
    with_hunks = "--- a/old.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n"
    assert apply(with_hunks, {"old.txt": "a\nb\n"}) == {"old.txt": None}
    git_style = "diff --git a/old.txt b/old.txt\ndeleted file mode 100644\nindex 1234567..0000000\n"
    assert apply(git_style, {"old.txt": "a\nb\n"}) == {"old.txt": None}


def test_a_deletion_whose_hunks_leave_lines_behind_is_refused() -> None:
    patch = "--- a/old.txt\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-a\n"
    assert "old.txt: the patch deletes it, but its hunks leave lines" in rejected(patch, {"old.txt": "a\nb\n"})


def test_a_rename_moves_the_patched_text() -> None:
    patch = "--- a/old.py\n+++ b/new.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
    assert apply(patch, {"old.py": "x = 1\n", "new.py": None}) == {"old.py": None, "new.py": "x = 2\n"}


def test_modifying_a_missing_file_is_refused() -> None:
    patch = "--- a/gone.txt\n+++ b/gone.txt\n@@ -1 +1 @@\n-a\n+b\n"
    assert "gone.txt: the file does not exist; to create it, use `--- /dev/null`" in rejected(patch, {"gone.txt": None})


def test_shifted_line_numbers_are_found_nearby_and_the_drift_carries_to_later_hunks() -> None:
    patch = (
        "--- f.txt\n+++ f.txt\n"
        "@@ -9,3 +9,3 @@\n line 4\n-line 5\n+five\n line 6\n"  # really at line 4: 5 lines early
        "@@ -20,2 +20,2 @@\n line 15\n-line 16\n+sixteen\n"  # really at 15: same drift
    )
    assert apply(patch, {"f.txt": LINES})["f.txt"] == LINES.replace("line 5\n", "five\n").replace(
        "line 16\n", "sixteen\n"
    )


def test_wrong_hunk_lengths_are_recounted() -> None:
    patch = "--- f.txt\n+++ f.txt\n@@ -4,1 +4,7 @@\n line 4\n-line 5\n+five\n line 6\n"
    with pytest.raises(UnidiffParseError):  # what unidiff alone makes of it
        PatchSet(patch)
    assert apply(patch, {"f.txt": LINES})["f.txt"] == LINES.replace("line 5\n", "five\n")


def test_a_bare_at_at_is_located_by_its_content() -> None:
    patch = "--- f.txt\n+++ f.txt\n@@\n line 11\n-line 12\n+twelve\n@@ def later\n line 17\n+line 17.5\n"
    assert len(PatchSet(patch)[0]) == 0  # unidiff alone would silently do nothing
    new = apply(patch, {"f.txt": LINES})["f.txt"]
    assert new == LINES.replace("line 12\n", "twelve\n").replace("line 17\n", "line 17\nline 17.5\n")


def test_blank_context_lines_without_their_space_and_fences_around_the_patch() -> None:
    patch = "```diff\n--- f.py\n+++ f.py\n@@ -1,3 +1,3 @@\n a = 1\n\n-b = 2\n+b = 3\n```\n"
    assert apply(patch, {"f.py": "a = 1\n\nb = 2\n"})["f.py"] == "a = 1\n\nb = 3\n"


def test_trailing_whitespace_is_tolerated_when_nothing_matches_exactly() -> None:
    patch = "--- f.py\n+++ f.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n"
    assert apply(patch, {"f.py": "def f():   \n    return 1\t\n"})["f.py"] == "def f():   \n    return 2\n"


def test_crlf_files_stay_crlf_whatever_the_patch_uses() -> None:
    text = "a\r\nb\r\nc\r\n"
    lf_patch = "--- w.txt\n+++ w.txt\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n+B2\n c\n"
    assert apply(lf_patch, {"w.txt": text})["w.txt"] == "a\r\nB\r\nB2\r\nc\r\n"
    assert apply(lf_patch.replace("\n", "\r\n"), {"w.txt": text})["w.txt"] == "a\r\nB\r\nB2\r\nc\r\n"


def test_a_file_without_a_final_newline_keeps_it_missing_when_the_marker_is_left_out() -> None:
    patch = "--- f.txt\n+++ f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
    assert apply(patch, {"f.txt": "a\nb"})["f.txt"] == "a\nc"
    assert apply(patch, {"f.txt": "a\nb\n"})["f.txt"] == "a\nc\n"


def test_no_newline_markers_are_obeyed() -> None:
    add_newline = "--- f.txt\n+++ f.txt\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n"
    assert apply(add_newline, {"f.txt": "a"})["f.txt"] == "a\n"
    drop_newline = "--- f.txt\n+++ f.txt\n@@ -1 +1 @@\n-a\n+a\n\\ No newline at end of file\n"
    assert apply(drop_newline, {"f.txt": "a\n"})["f.txt"] == "a"
    appended = "--- f.txt\n+++ f.txt\n@@ -1 +1,2 @@\n a\n+b\n"
    assert apply(appended, {"f.txt": "a"})["f.txt"] == "a\nb"


def test_a_rejected_hunk_is_reported_exactly_and_nothing_is_applied() -> None:
    patch = (
        "--- a/f.txt\n+++ b/f.txt\n"
        "@@ -1,2 +1,2 @@\n-line 1\n+one\n line 2\n"
        "@@ -7,6 +7,6 @@\n line 7\n line 8\n-line 9 (stale)\n+nine\n line 10\n line 11\n line 12\n"
        "--- a/g.txt\n+++ b/g.txt\n@@ -1 +1 @@\n-g\n+G\n"
    )
    with pytest.raises(PatchError) as caught:
        apply_patch(parse_patch(patch), {"f.txt": LINES, "g.txt": "g\n"})
    assert caught.value.problems == [
        "f.txt: hunk 2 of 2 (@@ -7,6 +7,6 @@) was rejected: context not found. Its first 2 line(s) match at"
        " line 7; then it expects 'line 9 (stale)' but line 9 is 'line 9'.\n"
        "  It looked for:\n    |line 7\n    |line 8\n    |line 9 (stale)\n    |line 10\n    | … (2 more)"
    ]


def test_every_rejected_hunk_of_every_file_is_reported() -> None:
    patch = "--- a.txt\n+++ a.txt\n@@ -1 +1 @@\n-x\n+y\n--- b.txt\n+++ b.txt\n@@ -1 +1 @@\n-x\n+y\n"
    message = rejected(patch, {"a.txt": "a\n", "b.txt": "b\n"})
    assert "a.txt: hunk 1 of 1" in message and "b.txt: hunk 1 of 1" in message
    assert "Not even its first line occurs in the file." in message


def test_context_found_in_several_places_is_ambiguous() -> None:
    text = "x\nsame\ny\nz\nsame\ny\n"
    bare = "--- f\n+++ f\n@@\n same\n-y\n+Y\n"
    assert "hunk 1 of 1 (@@) was rejected: ambiguous: its context was found at lines 2 and 5" in rejected(
        bare, {"f": text}
    )
    equidistant = "--- f\n+++ f\n@@ -3,2 +3,2 @@\n same\n-y\n+Y\n"  # stated line 3: lines 2 and 5 are 1 and 2 off
    assert apply(equidistant, {"f": text})["f"] == "x\nsame\nY\nz\nsame\ny\n"
    tie = "--- f\n+++ f\n@@ -3,2 +3,2 @@\n same\n-y\n+Y\n"  # found at lines 1 and 5: both 2 lines off
    message = rejected(tie, {"f": "same\ny\nq\nq\nsame\ny\n"})
    assert "found at lines 1 and 5, equally far from the stated line 3; add more context" in message


def test_a_hunk_that_was_already_applied_is_recognised() -> None:
    patch = "--- f.txt\n+++ f.txt\n@@ -4,3 +4,3 @@\n line 4\n-line 5\n+five\n line 6\n"
    already = LINES.replace("line 5\n", "five\n")
    assert "the file already contains its new lines (already applied?)" in rejected(patch, {"f.txt": already})


def test_prefixes_are_stripped_only_from_git_style_paths() -> None:
    [git] = parse_patch("--- a/src/x.py\n+++ b/src/x.py\n@@ -1 +1 @@\n-a\n+b\n")
    assert (git.old_path, git.new_path) == ("src/x.py", "src/x.py")
    [plain] = parse_patch("--- a/x.py\n+++ a/x.py\n@@ -1 +1 @@\n-a\n+b\n")
    assert plain.path == "a/x.py"


@pytest.mark.parametrize(
    ("patch", "reason"),
    [
        ("just some text\n", "no file changes found"),
        ("*** Begin Patch\n*** Update File: a.py\n", "not a unified diff"),
        ("@@ -1 +1 @@\n-a\n+b\n", "could not parse the patch"),
    ],
)
def test_text_that_is_not_a_unified_diff_is_refused(patch: str, reason: str) -> None:
    with pytest.raises(PatchError, match=reason):
        parse_patch(patch)
