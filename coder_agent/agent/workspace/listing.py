"""Which files a search looks at: ripgrep's walk (`rg --files`), honouring `.gitignore`, `.ignore` and
`.rgignore` in a git work tree or not; the Python listing of `ignore.py` when rg cannot run (`ripgrep.py`).

What rg is told (`walk_args`), for `list_dir`, `glob` and `grep` alike:

- `--hidden`: dot files are the project's too (`.github/`, `.env.example`); `.git` itself is left out;
- `--no-require-git`: a `.gitignore` counts outside a git work tree as well, as it always has here;
- outside git, the folders of `ignore.DEFAULT_SKIP` (`node_modules`, `.venv`, ...) are left out as the Python
  walk leaves them out; in git, what git shows is shown (a tracked `build/` too);
- no link is followed (rg's default): a link out of the roots is never searched.

A folder named explicitly is searched even when its parents' ignore files hide it: when rg finds no file at
all in it, it is walked again without its parents' ignore files (`--no-ignore-parent`), its own still applied.

Where this differs from git's listing: a tracked file that an ignore rule matches is not listed (git lists it);
links are not listed (git lists them, and were followed, out of the roots too); a folder that is a repository
of its own is walked (git shows it as one entry).
"""

from __future__ import annotations

import os

from .globs import Prefilter
from .ignore import DEFAULT_SKIP, MAX_FILES, Listing, python_listing
from .ripgrep import Rg, RgOptions, fall_back, find_rg, run_rg
from .shadow_repo import git_top

TYPE_NAME = "coderagentchosen"  # the file type rg is told a glob's file names as (no built-in type has it)


def in_git(root: str) -> bool:
    """Whether `root` lies in a git work tree (a `.git` in it or above it), as rg itself decides."""
    return git_top(os.path.abspath(root)) is not None


def walk_args(root: str, chosen: Prefilter | None = None, parents: bool = True) -> list[str]:
    """rg's arguments for walking `root` as the search tools walk it (see the module docstring)."""
    args = ["--hidden", "--no-require-git", "--glob=!.git"]
    if not in_git(root):
        args += [f"--glob=!{name}/" for name in sorted(DEFAULT_SKIP - {".git"})]
    if not parents:
        args.append("--no-ignore-parent")
    if chosen is not None and chosen.name is not None:
        args += [f"--type-add={TYPE_NAME}:{chosen.name}", f"--type={TYPE_NAME}"]
    if chosen is not None and chosen.depth is not None:
        args.append(f"--max-depth={chosen.depth}")
    return args


def relative(line: bytes) -> str:
    """A path rg printed for the search root `.`, as the tools show it: relative, "/"-separated."""
    name = line.decode("utf-8", errors="surrogateescape")
    return name[2:] if name.startswith("./") else name


async def _rg_files(
    rg: Rg, root: str, limit: int, options: RgOptions, args: list[str]
) -> tuple[list[str], bool, str | None, bool]:
    """The files rg lists, whether it stopped at `limit`, why it failed (or None), whether it timed out."""
    lines: list[bytes] = []

    def take(more: list[bytes]) -> bool:
        lines.extend(more)
        return len(lines) >= limit

    run = await run_rg(rg, ["--files", *args, "--", "."], root, take, options)
    # One decode, one "./" taken off and one split for them all: per line, Python costs more than rg's walk.
    text = b"\n".join(lines[:limit]).decode("utf-8", errors="surrogateescape")
    files = text.removeprefix("./").replace("\n./", "\n").split("\n") if text else []
    return files, run.stopped, run.failure, run.timed_out


async def rg_listing(rg: Rg, root: str, limit: int, options: RgOptions, chosen: Prefilter | None) -> Listing | str:
    """rg's listing of folder `root` (narrowed to `chosen` where given), or why rg failed."""
    files, capped, failure, timed_out = await _rg_files(rg, root, limit, options, walk_args(root, chosen))
    if failure is not None:
        return failure
    if not files and not timed_out and await hidden_by_parents(rg, root, options, chosen):
        files, capped, failure, timed_out = await _rg_files(rg, root, limit, options, walk_args(root, chosen, False))
        if failure is not None:
            return failure
    notes = []
    if timed_out:
        notes.append(f"the listing stopped after {options.timeout:g} s: only the files found by then are here")
    return Listing(root, sorted(files), capped, "rg", notes)


async def hidden_by_parents(rg: Rg, root: str, options: RgOptions, chosen: Prefilter | None) -> bool:
    """Whether rg, which found nothing in `root` (narrowed to `chosen`), finds no file at all there: then the
    folder was named although its parents' ignore files hide it, and is walked without them."""
    if chosen is None or (chosen.name is None and chosen.depth is None):
        return True
    files, _, failure, _ = await _rg_files(rg, root, 1, options, walk_args(root))
    return failure is None and not files


async def list_files(
    root: str, limit: int = MAX_FILES, options: RgOptions | None = None, chosen: Prefilter | None = None
) -> Listing:
    """The files a search under folder `root` looks at (sorted), at most `limit`; with `chosen`, at least those
    whose names and depth it allows (the caller still matches its glob: without rg, `chosen` is not used)."""
    options = options or RgOptions()
    rg = await find_rg(options)
    if isinstance(rg, Rg):
        listing = await rg_listing(rg, root, limit, options, chosen)
        if isinstance(listing, Listing):
            return listing
        fall_back(listing, root)
    else:
        fall_back(rg)
    return await python_listing(root, limit)
