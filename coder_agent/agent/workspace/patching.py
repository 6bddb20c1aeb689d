"""Unified diffs written by a model: parsed leniently, applied all or nothing. Pure functions, no I/O.

unidiff parses, but it is strict where models are sloppy (hunk lengths must be right) and silent where they
are vague (a bare `@@` parses to no hunks). So `parse_patch` first normalises the text: it recounts each
hunk, numbers bare `@@` hunks and remembers which hunks carried no line numbers. `apply_patch` then places
each hunk by its content, searching outward from the stated line, and keeps each file's newline style.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

DEV_NULL = "/dev/null"
_HUNK_HEADER = re.compile(r"^@@\s*-(\d+)(?:,\d+)?\s+\+(\d+)(?:,\d+)?\s*@@ ?(.*)$")
_BODY_PREFIXES = (" ", "-", "+", "\\")
_SHOWN_LINES = 4


class PatchError(ValueError):
    """The patch cannot be applied; each problem names the file, the hunk and why."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = list(problems)


@dataclass(frozen=True)
class Hunk:
    header: str  # as the patch wrote it
    start: int | None  # the stated first line of the old side; None for a bare `@@`
    lines: tuple[tuple[str, str], ...]  # (" " | "-" | "+", text without newline)
    old_no_eol: bool = False  # a `\ No newline at end of file` after an old-side line
    new_no_eol: bool = False

    @property
    def old(self) -> list[str]:
        return [text for kind, text in self.lines if kind != "+"]

    @property
    def new(self) -> list[str]:
        return [text for kind, text in self.lines if kind != "-"]


@dataclass(frozen=True)
class FilePatch:
    old_path: str | None  # None: the patch creates the file
    new_path: str | None  # None: the patch deletes the file
    hunks: tuple[Hunk, ...]

    @property
    def path(self) -> str:
        path = self.new_path or self.old_path
        assert path is not None
        return path

    @property
    def paths(self) -> list[str]:
        return list(dict.fromkeys(path for path in (self.old_path, self.new_path) if path))


@dataclass(frozen=True)
class FileResult:
    path: str
    old_text: str | None  # None: the file is new
    new_text: str | None  # None: the file is deleted
    line: int  # 1-based line of the first change


def uses_crlf(text: str) -> bool:
    """Whether the text's line breaks are (all) CRLF."""
    return "\r\n" in text and text.count("\r\n") == text.count("\n")


# --- parsing ---------------------------------------------------------------------------------------------------------


def _is_file_header(lines: Sequence[str], index: int) -> bool:
    line = lines[index]
    if line.startswith(("diff --git ", "Index: ")):
        return True
    return line.startswith("--- ") and index + 1 < len(lines) and lines[index + 1].startswith("+++ ")


def _normalise(text: str) -> tuple[str, list[tuple[str, bool]]]:
    """A strict unified diff for unidiff, and each hunk's original header and whether it had line numbers."""
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    out: list[str] = []
    headers: list[tuple[str, bool]] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if not line.startswith("@@"):
            if not line.startswith("```"):  # a Markdown fence around the patch
                out.append(line)
            continue
        body: list[str] = []
        while index < len(lines) and not lines[index].startswith("@@") and not _is_file_header(lines, index):
            if lines[index] and not lines[index].startswith(_BODY_PREFIXES):
                break
            body.append(lines[index])
            index += 1
        while body and body[-1] == "":  # blank lines after a hunk are separators, not context
            body.pop()
        body = [" " if entry == "" else entry for entry in body]
        old = sum(1 for entry in body if entry[0] in " -")
        new = sum(1 for entry in body if entry[0] in " +")
        match = _HUNK_HEADER.match(line)
        if match:
            old_start, new_start, section = int(match[1]), int(match[2]), match[3]
        else:
            old_start, new_start, section = 1, 1, line[2:].strip().removesuffix("@@").strip()
        headers.append((line, match is not None))
        out.append(f"@@ -{old_start},{old} +{new_start},{new} @@ {section}".rstrip())
        out.extend(body)
    return "\n".join(out) + "\n", headers


def _strip_prefix(path: str, prefix: str, git_style: bool) -> str | None:
    path = path.strip().strip('"')
    if path == DEV_NULL:
        return None
    if git_style:
        path = path.removeprefix(prefix)
    if not path:
        raise PatchError(["a `---` or `+++` header has no path"])
    return os.path.normpath(path)


def parse_patch(text: str) -> list[FilePatch]:
    """The files and hunks of a unified diff; raises PatchError when it is not one."""
    if "*** Begin Patch" in text:
        raise PatchError(["this is not a unified diff: write `--- path` / `+++ path` headers and `@@` hunks"])
    normalised, headers = _normalise(text)
    try:
        patch_set = PatchSet(normalised)
    except UnidiffParseError as exc:
        raise PatchError([f"could not parse the patch as a unified diff: {exc}"]) from exc
    pending = iter(headers)
    patches: list[FilePatch] = []
    for patched in patch_set:
        source, target = patched.source_file, patched.target_file
        git_style = source.startswith(("a/", DEV_NULL)) and target.startswith(("b/", DEV_NULL))
        hunks: list[Hunk] = []
        for parsed in patched:
            header, numbered = next(pending)
            lines: list[tuple[str, str]] = []
            no_eol = {"-": False, "+": False}
            for line in parsed:
                kind = line.line_type
                if kind == "\\" and lines:
                    for side in ("-", "+") if lines[-1][0] == " " else (lines[-1][0],):
                        no_eol[side] = True
                elif kind in (" ", "-", "+"):
                    lines.append((kind, line.value.removesuffix("\n")))
            start = parsed.source_start if numbered else None
            hunks.append(Hunk(header, start, tuple(lines), no_eol["-"], no_eol["+"]))
        old_path = _strip_prefix(source, "a/", git_style)
        new_path = _strip_prefix(target, "b/", git_style)
        if old_path is None and new_path is None:
            raise PatchError(["a file section has /dev/null as both its old and its new path"])
        patches.append(FilePatch(old_path, new_path, tuple(hunks)))
    if not patches:
        raise PatchError(["no file changes found: expected `--- path` and `+++ path` headers followed by `@@` hunks"])
    return patches


# --- applying --------------------------------------------------------------------------------------------------------


class _Rejected(Exception):
    pass


def _split(text: str) -> tuple[list[str], list[str]]:
    """Lines without their breaks, and each line's break ("\\r\\n", "\\n" or "" for a last line without one)."""
    parts = text.split("\n")
    last = parts.pop()
    lines = [part.removesuffix("\r") for part in parts]
    endings = ["\r\n" if part.endswith("\r") else "\n" for part in parts]
    if last:
        lines.append(last)
        endings.append("")
    return lines, endings


def _exact(a: str, b: str) -> bool:
    return a == b


def _loose(a: str, b: str) -> bool:
    return a.rstrip() == b.rstrip()


def _find(lines: Sequence[str], wanted: Sequence[str], start: int, same: Callable[[str, str], bool]) -> list[int]:
    last = len(lines) - len(wanted)
    return [at for at in range(start, last + 1) if all(same(lines[at + i], w) for i, w in enumerate(wanted))]


def _closest(lines: Sequence[str], wanted: Sequence[str], start: int) -> str:
    """Where the longest run of the hunk's first lines matches, and the line that then differs."""
    best_at, best_len = -1, 0
    for at in range(start, len(lines)):
        length = 0
        while length < len(wanted) and at + length < len(lines) and _loose(lines[at + length], wanted[length]):
            length += 1
        if length > best_len:
            best_at, best_len = at, length
    if best_len == 0:
        return " Not even its first line occurs in the file."
    if best_at + best_len >= len(lines):
        return f" Its first {best_len} line(s) match at line {best_at + 1}, then the file ends."
    return (
        f" Its first {best_len} line(s) match at line {best_at + 1}; then it expects {wanted[best_len]!r}"
        f" but line {best_at + best_len + 1} is {lines[best_at + best_len]!r}."
    )


def _locate(hunk: Hunk, lines: Sequence[str], cursor: int, drift: int) -> int:
    """The index in `lines` where the hunk's old side starts."""
    old = hunk.old
    expected = None
    if hunk.start is not None:
        expected = min(max((hunk.start - 1 if old else hunk.start) + drift, cursor), len(lines))
    if not old:
        if expected is not None or cursor == len(lines):
            return len(lines) if expected is None else expected
        raise _Rejected("it has no context lines and no line numbers, so there is no telling where it goes")
    for same in (_exact, _loose):
        found = _find(lines, old, cursor, same)
        if found:
            break
    else:
        if any(kind == "+" for kind, _ in hunk.lines) and _find(lines, hunk.new, 0, _loose):
            raise _Rejected("context not found, but the file already contains its new lines (already applied?).")
        raise _Rejected("context not found." + _closest(lines, old, cursor))
    if expected is None:
        if len(found) > 1:
            raise _Rejected(f"ambiguous: its context was found at lines {_line_list(found)}; add more context.")
        return found[0]
    found.sort(key=lambda at: abs(at - expected))
    if len(found) > 1 and abs(found[0] - expected) == abs(found[1] - expected):
        raise _Rejected(
            f"ambiguous: its context was found at lines {_line_list(sorted(found))},"
            f" equally far from the stated line {hunk.start}; add more context."
        )
    return found[0]


def _line_list(indexes: Sequence[int]) -> str:
    shown = [str(at + 1) for at in indexes[:5]] + (["…"] if len(indexes) > 5 else [])
    return ", ".join(shown[:-1]) + " and " + shown[-1]


def _describe(path: str, number: int, total: int, hunk: Hunk, reason: str) -> str:
    looked_for = "\n".join(f"    |{text}" for text in hunk.old[:_SHOWN_LINES])
    more = f"\n    | … ({len(hunk.old) - _SHOWN_LINES} more)" if len(hunk.old) > _SHOWN_LINES else ""
    shown = f"\n  It looked for:\n{looked_for}{more}" if looked_for else ""
    return f"{path}: hunk {number} of {total} ({hunk.header}) was rejected: {reason}{shown}"


def patch_text(path: str, text: str, hunks: Sequence[Hunk]) -> tuple[str, int]:
    """`text` with the hunks applied and the 1-based line of the first change; raises PatchError on any reject."""
    lines, endings = _split(text)
    newline = "\r\n" if endings.count("\r\n") > endings.count("\n") else "\n"
    pieces: list[tuple[str, str]] = []
    problems: list[str] = []
    cursor = drift = 0
    first_line: int | None = None
    for number, hunk in enumerate(hunks, 1):
        try:
            at = _locate(hunk, lines, cursor, drift)
        except _Rejected as exc:
            problems.append(_describe(path, number, len(hunks), hunk, str(exc)))
            continue
        if hunk.start is not None:
            drift = at - (hunk.start - 1 if hunk.old else hunk.start)
        if first_line is None:
            leading = next((i for i, (kind, _) in enumerate(hunk.lines) if kind != " "), 0)
            first_line = at + leading + 1  # the first changed line
        pieces.extend(zip(lines[cursor:at], endings[cursor:at], strict=True))
        for kind, new_text in hunk.lines:
            if kind == " ":
                pieces.append((lines[at], endings[at]))  # the file's own line, even when matched loosely
            if kind == "+":
                pieces.append((new_text, newline))
            else:
                at += 1
        cursor = at
    if problems:
        raise PatchError(problems)
    pieces.extend(zip(lines[cursor:], endings[cursor:], strict=True))
    final_eol = not endings or endings[-1] != ""
    if any(hunk.new_no_eol for hunk in hunks):
        final_eol = False
    elif any(hunk.old_no_eol for hunk in hunks):
        final_eol = True
    out = [line + (ending or newline) for line, ending in pieces[:-1]]
    if pieces:
        out.append(pieces[-1][0] + (newline if final_eol else ""))
    return "".join(out), first_line or 1


def _apply_one(patch: FilePatch, current: Callable[[str], str | None]) -> tuple[dict[str, str | None], int]:
    old_path, new_path = patch.old_path, patch.new_path
    if old_path is None:
        assert new_path is not None
        existing = current(new_path)
        if existing:
            raise PatchError([f"{new_path}: the patch creates it (--- {DEV_NULL}) but it already exists"])
        created, line = patch_text(new_path, "", patch.hunks)
        return {new_path: created}, line
    text = current(old_path)
    if text is None:
        hint = f"; to create it, use `--- {DEV_NULL}`" if new_path else ""
        raise PatchError([f"{old_path}: the file does not exist{hint}"])
    if new_path is None:
        rest, line = patch_text(old_path, text, patch.hunks) if patch.hunks else ("", 1)
        if rest.strip():
            raise PatchError([f"{old_path}: the patch deletes it, but its hunks leave lines of it in place"])
        return {old_path: None}, line
    if new_path == old_path and not patch.hunks:
        raise PatchError([f"{old_path}: the patch has no hunks for it"])
    patched, line = patch_text(old_path, text, patch.hunks)
    if new_path == old_path:
        return {old_path: patched}, line
    if current(new_path) is not None:
        raise PatchError([f"{new_path}: the patch renames {old_path} to it, but it already exists"])
    return {old_path: None, new_path: patched}, line


def apply_patch(patches: Sequence[FilePatch], files: Mapping[str, str | None]) -> list[FileResult]:
    """The new text of every file the patches touch. `files` maps each path in them to its text (None: absent).

    All or nothing: raises PatchError naming every rejected hunk of every file.
    """
    working: dict[str, str | None] = {}
    first_lines: dict[str, int] = {}
    problems: list[str] = []

    def current(path: str) -> str | None:
        return working[path] if path in working else files[path]

    for patch in patches:
        try:
            updates, line = _apply_one(patch, current)
        except PatchError as exc:
            problems.extend(exc.problems)
            continue
        working.update(updates)
        for path in updates:
            first_lines.setdefault(path, line)
    if problems:
        raise PatchError(problems)
    return [
        FileResult(path, files[path], working[path], first_lines[path])
        for path in first_lines
        if files[path] is not None or working[path] is not None
    ]
