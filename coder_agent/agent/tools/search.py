"""`grep` and `glob`: find text and files on the local disk, skipping what .gitignore hides (see `ignore`).

Paths in the output are relative to the session's working directory when inside it, else absolute, so the
model can hand them straight to the other tools. Both are capped and say so when they stop early.
"""

from __future__ import annotations

import os
import re

import anyio
import anyio.from_thread
from pydantic import Field

from ..workspace.files import looks_binary
from ..workspace.ignore import Listing, glob_regex, list_files
from .base import Intent, Tool, ToolArgs, ToolContext, ToolError, ToolResult, fenced, text_content

MAX_LINE = 300  # characters of a matching line shown
MAX_FILE_BYTES = 5_000_000  # larger files are not searched
MAX_GLOB_RESULTS = 500


async def search_root(path: str | None, ctx: ToolContext) -> tuple[str, bool]:
    """The absolute path to search, and whether it is a folder."""
    root = ctx.resolve(path) if path else ctx.cwd
    target = anyio.Path(root)
    if not await target.exists():
        raise ToolError(f"{path or root} does not exist")
    return root, await target.is_dir()


def split_absolute(pattern: str) -> tuple[str, str]:
    """`/abs/dir/**/*.py` -> (`/abs/dir`, `**/*.py`): the folder before the first wildcard, and the rest."""
    fixed = re.split(r"[*?\[]", pattern, maxsplit=1)[0]
    cut = fixed.rfind("/")
    return pattern[:cut] or "/", pattern[cut + 1 :]


def _listing_note(listing: Listing) -> str:
    notes = [f"\n({note})" for note in listing.notes]
    if listing.capped:
        notes.append(f"\n(only the first {len(listing.files)} files were looked at)")
    return "".join(notes)


class GrepArgs(ToolArgs):
    pattern: str = Field(min_length=1, description="Python regular expression, matched against each line")
    path: str | None = Field(default=None, description="File or folder to search (default: the working directory)")
    glob: str | None = Field(
        default=None,
        description="Only files matching this glob: `*.py` matches file names at any depth, "
        "a glob with a `/` (`src/**/*.ts`) matches paths relative to `path`",
    )
    case_insensitive: bool = Field(default=False, description="Ignore upper/lower case")
    max_results: int = Field(default=100, ge=1, le=1000, description="Stop after this many matching lines")


def _grep_files(
    root: str, files: list[str], regex: re.Pattern[str], max_results: int
) -> tuple[list[tuple[str, int, str]], bool]:
    """(relative path, line number, line) of each match, and whether the search stopped at `max_results`."""
    matches: list[tuple[str, int, str]] = []
    for name in files:
        anyio.from_thread.check_cancelled()
        path = os.path.join(root, name)
        try:
            if os.path.getsize(path) > MAX_FILE_BYTES:
                continue
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        if looks_binary(data):
            continue
        text = data.decode("utf-8", errors="replace").replace("\r\n", "\n")
        if not regex.search(text):  # one pass over the file before going line by line
            continue
        for number, line in enumerate(text.split("\n"), start=1):
            if regex.search(line):
                shown = line if len(line) <= MAX_LINE else line[:MAX_LINE] + "…"
                matches.append((name, number, shown))
                if len(matches) >= max_results:
                    return matches, True
    return matches, False


class Grep(Tool[GrepArgs]):
    name = "grep"
    title = "Search file contents"
    kind = "search"
    args_model = GrepArgs
    read_only = True

    async def prepare(self, args: GrepArgs, ctx: ToolContext) -> Intent:
        title = f"grep {args.pattern!r}"
        if args.path:
            title += f" in {ctx.display(ctx.resolve(args.path))}"
        if args.glob:
            title += f" ({args.glob})"
        return Intent(title=title, kind="search", effect="read")

    async def run(self, args: GrepArgs, intent: Intent, ctx: ToolContext) -> ToolResult:
        flags = re.MULTILINE | (re.IGNORECASE if args.case_insensitive else 0)
        try:
            regex = re.compile(args.pattern, flags)
        except re.error as exc:
            raise ToolError(f"invalid regular expression: {exc}") from exc
        root, is_dir = await search_root(args.path, ctx)
        if is_dir:
            listing = await list_files(root)
            files = listing.files
            if args.glob:
                glob = args.glob.removeprefix("./").lstrip("/") if "/" in args.glob else "**/" + args.glob
                matcher = re.compile(glob_regex(glob) + r"\Z")
                files = [name for name in files if matcher.match(name)]
            note = _listing_note(listing)
        else:
            root, files, note = os.path.dirname(root), [os.path.basename(root)], ""
        found, capped = await anyio.to_thread.run_sync(_grep_files, root, files, regex, args.max_results)
        if not found:
            output = f"No matches in {len(files)} files.{note}"
            return ToolResult(output=output, content=[text_content(output)])
        lines = [f"{ctx.display(os.path.join(root, name))}:{number}:{text}" for name, number, text in found]
        if capped:
            lines.append(f"(stopped at {args.max_results} matches: narrow the pattern, path or glob)")
        output = "\n".join(lines) + note
        return ToolResult(output=output, content=[text_content(fenced(output))])


class GlobArgs(ToolArgs):
    pattern: str = Field(
        min_length=1,
        description="Glob over paths relative to `path`: `*` stays within one folder, `**` spans any number "
        "of folders (`**/*.py`, `src/*.ts`, `**/test_*.py`)",
    )
    path: str | None = Field(default=None, description="Folder to search in (default: the working directory)")


class Glob(Tool[GlobArgs]):
    name = "glob"
    title = "Find files"
    kind = "search"
    args_model = GlobArgs
    read_only = True

    def __init__(self, max_results: int = MAX_GLOB_RESULTS) -> None:
        self.max_results = max_results

    async def prepare(self, args: GlobArgs, ctx: ToolContext) -> Intent:
        title = f"glob {args.pattern}" + (f" in {ctx.display(ctx.resolve(args.path))}" if args.path else "")
        return Intent(title=title, kind="search", effect="read")

    async def run(self, args: GlobArgs, intent: Intent, ctx: ToolContext) -> ToolResult:
        pattern = args.pattern
        if pattern.startswith("/"):  # the fixed part of an absolute pattern is the folder to search
            root, pattern = split_absolute(pattern)
            is_dir = await anyio.Path(root).is_dir()
        else:
            root, is_dir = await search_root(args.path, ctx)
        while pattern.startswith("./"):
            pattern = pattern[2:]
        if not is_dir:
            raise ToolError(f"{ctx.display(root)} is not a folder")
        matcher = re.compile(glob_regex(pattern) + r"\Z")
        listing = await list_files(root)
        found = [name for name in listing.files if matcher.match(name)]
        if not found:
            output = f"No files match {args.pattern}.{_listing_note(listing)}"
            return ToolResult(output=output, content=[text_content(output)])
        lines = [ctx.display(os.path.join(root, name)) for name in found[: self.max_results]]
        if len(found) > self.max_results:
            lines.append(f"(showing {self.max_results} of {len(found)} files: narrow the pattern)")
        output = "\n".join(lines) + _listing_note(listing)
        return ToolResult(output=output, content=[text_content(fenced(output))])
