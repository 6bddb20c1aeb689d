"""A server's diagnostics as the core's `Problem`s, and which of them an edit introduced.

An edit moves lines, so a diagnostic is known again by what it says and where it points, not by its line
number: its severity, code and message, and the text of the line it starts on. What the new text has more of
than the old is new; what the old had more of is fixed.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ..agent.diagnostics import Problem, Severity
from .types import Diagnostic

SEVERITIES: dict[int, Severity] = {1: "error", 2: "warning", 3: "info", 4: "hint"}
MAX_MESSAGE = 400
_SPACE = re.compile(r"\s+")


def severity_of(diagnostic: Diagnostic) -> Severity:
    return SEVERITIES.get(diagnostic.severity or 1, "error")


def significant(diagnostics: Sequence[Diagnostic]) -> list[Diagnostic]:
    """Errors and warnings: what an edit is told about (information and hints are the editor's gray text)."""
    return [d for d in diagnostics if (d.severity or 1) <= 2]


def _line(lines: Sequence[str], number: int) -> str:
    return lines[number] if 0 <= number < len(lines) else ""


def _key(diagnostic: Diagnostic, lines: Sequence[str]) -> tuple[object, ...]:
    line = _line(lines, diagnostic.range.start.line)
    return (diagnostic.severity or 1, diagnostic.code, diagnostic.message, line.strip())


@dataclass(frozen=True)
class Change:
    new: list[Diagnostic]
    fixed: int
    remaining: int


def compare(before: Sequence[Diagnostic], old_text: str, now: Sequence[Diagnostic], new_text: str) -> Change:
    old_lines, new_lines = old_text.split("\n"), new_text.split("\n")
    left = Counter(_key(diagnostic, old_lines) for diagnostic in before)
    new = []
    for diagnostic in now:
        key = _key(diagnostic, new_lines)
        if left[key] > 0:
            left[key] -= 1
        else:
            new.append(diagnostic)
    fixed = sum(left.values())
    return Change(new, fixed, len(before) - fixed)


def _column(line: str, utf16: int) -> int:
    """The 1-based column, in characters, of a UTF-16 offset into `line` (LSP's default position encoding)."""
    units = 0
    for index, char in enumerate(line):
        if units >= utf16:
            return index + 1
        units += 2 if ord(char) > 0xFFFF else 1
    return len(line) + 1


def problem(path: str, diagnostic: Diagnostic, text: str) -> Problem:
    start = diagnostic.range.start
    line = _line(text.split("\n"), start.line).rstrip("\r")
    message = _SPACE.sub(" ", diagnostic.message.replace("\u00a0", " ")).strip()
    if len(message) > MAX_MESSAGE:
        message = message[: MAX_MESSAGE - 1] + "…"
    code = str(diagnostic.code) if diagnostic.code is not None else None
    return Problem(path, start.line + 1, _column(line, start.character), severity_of(diagnostic), message, code)
