"""`grep` and `glob`: find text and files, skipping what the ignore files hide (see `workspace/listing.py`).

Both run on ripgrep (`workspace/ripgrep.py`, `grep_rg.py`). Without it (none found, the `ripgrep` setting is
`off`, or rg failed on this tree), on the Python code they ran on before: the listing of `workspace/ignore.py`
and the loop of `_grep_files`; that is said once in the log. The pattern is Python's regex syntax either way
(`rg_pattern.py` writes it for rg). One file named explicitly is read here, not by rg.

Paths in the output are relative to the session's working directory when inside it, else absolute, so the
model can hand them straight to the other tools. Both are capped and say so when they stop early.
"""

from __future__ import annotations

import os
import re

import anyio
import anyio.from_thread
from pydantic import Field

from ...kit.untrusted import Refused, open_checked
from ..workspace.files import looks_binary
from ..workspace.globs import glob_matcher, prefilter
from ..workspace.ignore import Listing, python_listing
from ..workspace.listing import list_files
from ..workspace.ripgrep import Rg, RgOptions, fall_back, find_rg
from .base import Intent, Tool, ToolArgs, ToolContext, ToolError, ToolResult, fenced, text_content
from .grep_rg import Found, GrepRun, rg_grep
from .rg_pattern import LineBreak, Untranslatable, for_ripgrep

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
    fixed = re.split(r"[*?\[{]", pattern, maxsplit=1)[0]
    cut = fixed.rfind("/")
    return pattern[:cut] or "/", pattern[cut + 1 :]


def _listing_note(listing: Listing) -> str:
    notes = [f"\n({note})" for note in listing.notes]
    if listing.capped:
        notes.append(f"\n(only the first {len(listing.files)} files were looked at)")
    return "".join(notes)


class GrepArgs(ToolArgs):
    pattern: str = Field(
        min_length=1, description="Regular expression in Python's syntax (`re`), matched against each line"
    )
    path: str | None = Field(default=None, description="File or folder to search (default: the working directory)")
    glob: str | None = Field(
        default=None,
        description="Only files matching this glob: `*.py` matches file names at any depth, "
        "a glob with a `/` (`src/**/*.ts`) matches paths relative to `path`; `*.{ts,tsx}` either",
    )
    case_insensitive: bool = Field(default=False, description="Ignore upper/lower case")
    max_results: int = Field(default=100, ge=1, le=1000, description="Stop after this many matching lines")


def _read(path: str) -> bytes | None:
    """The file's bytes, or None when it is not searched (not a regular file, too large, unreadable)."""
    try:
        fd, info = open_checked(path)  # never blocks: a pipe is refused, not opened for reading
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        return None if info.st_size > MAX_FILE_BYTES else handle.read(MAX_FILE_BYTES + 1)


# A pattern that can match a line but not the whole text holding it: `\A`, `\Z`, a negative lookaround (`x(?!\s)`
# at the end of a line sees the line break in the whole text). Those skip the one pass over the whole file.
_LINE_ONLY = re.compile(r"\\[AZ]|\(\?<?!")


def _grep_files(
    root: str, files: list[str], regex: re.Pattern[str], max_results: int
) -> tuple[list[tuple[str, int, str]], bool]:
    """(relative path, line number, line) of each match, and whether the search stopped at `max_results`."""
    matches: list[tuple[str, int, str]] = []
    whole_file_first = _LINE_ONLY.search(regex.pattern) is None
    for name in files:
        anyio.from_thread.check_cancelled()
        data = _read(os.path.join(root, name))
        if data is None or looks_binary(data):
            continue
        text = data.decode("utf-8", errors="replace").replace("\r\n", "\n")
        if whole_file_first and not regex.search(text):  # one pass over the file before going line by line
            continue
        for number, line in enumerate(text.split("\n"), start=1):
            if regex.search(line):
                shown = line if len(line) <= MAX_LINE else line[:MAX_LINE] + "…"
                matches.append((name, number, shown))
                if len(matches) >= max_results:
                    return matches, True
    return matches, False


def _grep_glob(glob: str) -> str:
    """A grep glob as a glob over paths: without a `/` it matches file names at any depth."""
    return glob.removeprefix("./").lstrip("/") if "/" in glob else "**/" + glob


class Grep(Tool[GrepArgs]):
    name = "grep"
    title = "Search file contents"
    kind = "search"
    args_model = GrepArgs
    read_only = True

    def __init__(self, rg: RgOptions | None = None) -> None:
        self.rg = rg or RgOptions()

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
        try:
            pattern: str | None = for_ripgrep(args.pattern, args.case_insensitive)
        except LineBreak as exc:
            raise ToolError(
                f"grep matches one line at a time, so this pattern can never match ({exc}): search for the text "
                "of one line, or read the file"
            ) from exc
        except Untranslatable as exc:
            pattern = None
            fall_back(f"a pattern not written for ripgrep ({exc})")
        root, is_dir = await search_root(args.path, ctx)
        if is_dir:
            found, count, note = await self._search_folder(root, args, regex, pattern)
        else:
            found, count, note = await self._search_file(root, regex, args.max_results)
            root = os.path.dirname(root)
        if not found.matches:
            output = f"No matches in {count} files.{note}" if count is not None else f"No matches.{note}"
            return ToolResult(output=output, content=[text_content(output)])
        lines = [f"{ctx.display(os.path.join(root, name))}:{number}:{text}" for name, number, text in found.matches]
        if found.capped:
            lines.append(f"(stopped at {args.max_results} matches: narrow the pattern, path or glob)")
        output = "\n".join(lines) + note
        return ToolResult(output=output, content=[text_content(fenced(output))])

    async def _search_file(self, path: str, regex: re.Pattern[str], max_results: int) -> tuple[Found, int, str]:
        try:
            fd, _ = await anyio.to_thread.run_sync(open_checked, path)
        except Refused as exc:
            raise ToolError(f"{exc.path} is not searched: {exc.reason}") from exc
        except OSError as exc:
            raise ToolError(f"{path} could not be read: {exc.strerror or exc}") from exc
        os.close(fd)
        folder, name = os.path.split(path)
        matches, capped = await anyio.to_thread.run_sync(_grep_files, folder, [name], regex, max_results)
        return Found(matches, capped), 1, ""

    async def _search_folder(
        self, root: str, args: GrepArgs, regex: re.Pattern[str], pattern: str | None
    ) -> tuple[Found, int | None, str]:
        """What grep finds under folder `root`: on rg, else in Python (see the module docstring)."""
        glob = _grep_glob(args.glob) if args.glob else None
        if pattern is not None:
            rg = await find_rg(self.rg)
            if isinstance(rg, Rg):
                grep = GrepRun(root, pattern, glob, args.max_results, MAX_LINE, MAX_FILE_BYTES)
                found = await rg_grep(rg, grep, self.rg)
                if isinstance(found, Found):
                    return found, found.searched, "".join(f"\n({note})" for note in found.notes)
                fall_back(found, root)
            else:
                fall_back(rg)
        listing = await python_listing(root)
        files = listing.files
        if glob is not None:
            matcher = glob_matcher(glob)
            files = [name for name in files if matcher.match(name)]
        matches, capped = await anyio.to_thread.run_sync(_grep_files, root, files, regex, args.max_results)
        return Found(matches, capped), len(files), _listing_note(listing)


class GlobArgs(ToolArgs):
    pattern: str = Field(
        min_length=1,
        description="Glob over paths relative to `path`: `*` stays within one folder, `**` spans any number "
        "of folders, `{a,b}` either (`**/*.py`, `src/*.ts`, `**/test_*.py`, `**/*.{ts,tsx}`)",
    )
    path: str | None = Field(default=None, description="Folder to search in (default: the working directory)")


class Glob(Tool[GlobArgs]):
    name = "glob"
    title = "Find files"
    kind = "search"
    args_model = GlobArgs
    read_only = True

    def __init__(self, max_results: int = MAX_GLOB_RESULTS, rg: RgOptions | None = None) -> None:
        self.max_results = max_results
        self.rg = rg or RgOptions()

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
        chosen = prefilter(pattern)
        listing = await list_files(root, options=self.rg, chosen=chosen)
        if listing.source == "rg" and chosen.exact:
            found = listing.files  # rg was told the glob whole: matching 100,000 paths again costs 30 ms
        else:
            matcher = glob_matcher(pattern)
            found = [name for name in listing.files if matcher.match(name)]
        if not found:
            output = f"No files match {args.pattern}.{_listing_note(listing)}"
            return ToolResult(output=output, content=[text_content(output)])
        lines = [ctx.display(os.path.join(root, name)) for name in found[: self.max_results]]
        if len(found) > self.max_results:
            lines.append(f"(showing {self.max_results} of {len(found)} files: narrow the pattern)")
        output = "\n".join(lines) + _listing_note(listing)
        return ToolResult(output=output, content=[text_content(fenced(output))])
