"""`grep` of a folder on ripgrep: the run, and its output read back as the tool shows it.

rg walks as every search tool walks (`listing.walk_args`), one line at a time (`--crlf`: `$` before a Windows line
end as well), skipping binary files and files past the size cap, printing each line cut at `MAX_COLUMNS` bytes.
`--stats` says how many files were searched, for "No matches in N files".

It searches on all cores first, as raw `rg` does, and the matches are sorted by path (each file's stay in order):
when all were found, that is the answer, the same every time. When they reach the cap, which ones came first is
the threads' race, so rg is run again in path order (`--sort=path`, one thread) and stopped at the cap: the first
matches by path, the same every time. A pattern that matches often reaches the cap early in both runs; a rare
one (the slow search) never runs twice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..workspace.globs import glob_matcher, prefilter
from ..workspace.listing import hidden_by_parents, relative, walk_args
from ..workspace.ripgrep import Rg, RgOptions, run_rg

MAX_COLUMNS = 1200  # bytes of a line rg prints: the tool shows fewer characters of it
_CUT = re.compile(rb" \[\.\.\. (?:\d+ more match(?:es)?|omitted end of long line)\]\Z")
_SEARCHED = re.compile(rb"(\d+) files? searched")


@dataclass
class Found:
    matches: list[tuple[str, int, str]] = field(default_factory=list)  # (path relative to the root, line, text)
    capped: bool = False  # stopped at the cap
    searched: int | None = None  # files searched, when rg said
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class GrepRun:
    """One grep of one folder: what to look for, where, and how much to show."""

    root: str
    pattern: str  # in rg's syntax (`rg_pattern.for_ripgrep`)
    glob: str | None
    max_results: int
    max_line: int  # characters of a line shown
    max_file_bytes: int


def _shown(text: bytes, max_line: int) -> str:
    cut = _CUT.search(text)
    if cut is not None:
        text = text[: cut.start()]
    shown = text.decode("utf-8", errors="replace").removesuffix("\r")
    return shown[:max_line] + "…" if cut is not None or len(shown) > max_line else shown


async def _run(rg: Rg, grep: GrepRun, options: RgOptions, parents: bool, ordered: bool) -> Found | str:
    chosen = prefilter(grep.glob) if grep.glob else None
    matcher = glob_matcher(grep.glob) if grep.glob else None
    found = Found()
    tail: list[bytes] = []

    def take(lines: list[bytes]) -> bool:
        for line in lines:
            path, nul, rest = line.partition(b"\0")
            if not nul:  # the statistics at the end
                tail.append(line)
                continue
            name = relative(path)
            if matcher is not None and not matcher.match(name):
                continue
            number, _, text = rest.partition(b":")
            found.matches.append((name, int(number), _shown(text, grep.max_line)))
            if len(found.matches) >= grep.max_results:
                return True
        return False

    args = [
        *("--line-number", "--null", "--no-heading", "--color=never", "--crlf", "--stats"),
        *(["--sort=path"] if ordered else []),
        *(f"--max-filesize={grep.max_file_bytes}", f"--max-columns={MAX_COLUMNS}", "--max-columns-preview"),
        "--engine=auto",
        *walk_args(grep.root, chosen, parents),
        f"--regexp={grep.pattern}",
        *("--", "."),
    ]
    run = await run_rg(rg, args, grep.root, take, options)
    if run.failure is not None:
        return run.failure
    found.capped = run.stopped
    searched = [int(match.group(1)) for line in tail if (match := _SEARCHED.match(line))]
    found.searched = searched[0] if searched else None
    if run.timed_out:
        found.notes.append(f"the search stopped after {options.timeout:g} s: narrow the path or glob")
    found.matches.sort(key=lambda match: match[0])  # rg sorts each folder's entries; the tools sort whole paths
    return found


async def rg_grep(rg: Rg, grep: GrepRun, options: RgOptions) -> Found | str:
    """The matches of `grep`, or why rg could not search (the caller then falls back to Python)."""
    parents = True
    found = await _run(rg, grep, options, parents, ordered=False)
    if isinstance(found, Found) and not found.matches and found.searched == 0:
        chosen = prefilter(grep.glob) if grep.glob else None
        if await hidden_by_parents(rg, grep.root, options, chosen):
            parents = False
            found = await _run(rg, grep, options, parents, ordered=False)
    if isinstance(found, Found) and found.capped:
        return await _run(rg, grep, options, parents, ordered=True)
    return found
