"""The globs `grep` and `glob` take, over "/"-separated paths relative to the folder searched.

`*` and `?` stay within one folder, `**` as a whole segment spans any number of folders, `[...]` is a class
(`[!...]` or `[^...]` negated), `{a,b}` is either (not nested), `\\` escapes the next character. The same
regex decides with ripgrep and without it: rg is only told, where it can be, which file names and how deep to
look (`Prefilter`), so that it skips the rest of the tree. A glob is not handed to rg as `--glob`: rg lets such
a glob override the ignore files (`-g '*.log'` would list a .gitignore'd `debug.log`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A file-name glob rg's `--type-add` takes as it is: no escapes, no classes, no nested or unclosed braces.
_PLAIN_NAME = re.compile(r"[^/\\\[\]{}]*(?:\{[^/\\\[\]{}]*\}[^/\\\[\]{}]*)*")


def _segment(segment: str, braces: bool) -> str:
    out: list[str] = []
    i = 0
    while i < len(segment):
        char = segment[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "\\" and i + 1 < len(segment):
            i += 1
            out.append(re.escape(segment[i]))
        elif char == "[" and (end := segment.find("]", i + 2)) != -1:
            body = segment[i + 1 : end]
            negate = body[:1] in ("!", "^")
            body = body[1:] if negate else body
            out.append("[" + ("^" if negate else "") + body.replace("\\", "\\\\") + "]")
            i = end
        elif braces and char == "{" and (end := segment.find("}", i + 1)) != -1 and "{" not in segment[i + 1 : end]:
            choices = segment[i + 1 : end].split(",")
            out.append("(?:" + "|".join(_segment(choice, braces=False) for choice in choices) + ")")
            i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def glob_regex(pattern: str, braces: bool = True) -> str:
    """A glob over "/"-separated relative paths as a regex body (`braces=False`: `{` is plain, as in .gitignore)."""
    segments = pattern.split("/")
    out: list[str] = []
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            out.append(".*" if last else "(?:[^/]+/)*")
        else:
            out.append(_segment(segment, braces) + ("" if last else "/"))
    return "".join(out)


def glob_matcher(pattern: str) -> re.Pattern[str]:
    return re.compile(glob_regex(pattern) + r"\Z")


@dataclass(frozen=True)
class Prefilter:
    """What rg can be told of a glob: the file names it allows (`--type-add`) and how deep it reaches."""

    name: str | None  # a glob over file names, or None: any name
    depth: int | None  # folders below the root a match can lie in, plus one (rg's --max-depth), or None: any
    exact: bool = False  # what rg lists is exactly what the glob matches (`*.py`, `**/test_*.py`)


def prefilter(pattern: str) -> Prefilter:
    segments = pattern.split("/")
    last = segments[-1]
    name = last if last != "**" and "**" not in last and _PLAIN_NAME.fullmatch(last) else None
    depth = None if "**" in segments else len(segments)
    return Prefilter(name, depth, name is not None and pattern in (name, f"**/{name}"))
