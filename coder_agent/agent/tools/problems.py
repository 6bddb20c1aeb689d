"""Language servers' findings as the model reads them: after an edit (what it introduced), and the `diagnostics`
tool's (what is there now). Lines are `path:line:column: severity: message [code]`, paths as the model names
them, and the lists are capped with a note of what was left out."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import anyio

from ..diagnostics import Diagnostics, Edit, EditReport, Problem, ProblemReport

log = logging.getLogger(__name__)

MAX_EDIT_PROBLEMS = 10  # an edit's result lists this many new problems
MAX_LISTED = 200  # the `diagnostics` tool lists this many
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2, "hint": 3}

Display = Callable[[str], str]


def problem_line(problem: Problem, display: Display) -> str:
    code = f" [{problem.code}]" if problem.code else ""
    return f"{display(problem.path)}:{problem.line}:{problem.column}: {problem.severity}: {problem.message}{code}"


def _ordered(problems: Sequence[Problem]) -> list[Problem]:
    return sorted(problems, key=lambda p: (SEVERITY_ORDER[p.severity], p.path, p.line, p.column))


def _listed(problems: Sequence[Problem], cap: int, display: Display, more: str) -> list[str]:
    lines = [problem_line(problem, display) for problem in _ordered(problems)[:cap]]
    if len(problems) > cap:
        lines.append(f"... and {len(problems) - cap} more {more}")
    return lines


def edit_report_text(report: EditReport, display: Display, wait: float) -> str:
    checker = report.checker
    if report.stopped is not None:
        return f"{checker} stopped ({report.stopped}); its files are no longer checked in this session."
    parts: list[str] = []
    if report.new:
        count = len(report.new)
        heading = f"{count} new problem{'s' if count > 1 else ''} ({checker}):"
        more = "(the diagnostics tool lists every problem)"
        parts.append("\n".join([heading, *_listed(report.new, MAX_EDIT_PROBLEMS, display, more)]))
    if report.late:
        names = ", ".join(display(path) for path in report.paths)
        what = (
            f"is still starting: {names} not checked yet"
            if report.starting
            else (f"had not finished checking {names} within {wait:g} s")
        )
        parts.append(
            f"{checker} {what}; the next edit's check compares with the files as you last heard of them (or ask "
            "the diagnostics tool)."
        )
    elif not report.new:
        said = [f"No new problems ({checker})"]
        if report.fixed:
            said.append(f"{report.fixed} fixed")
        if report.remaining:
            said.append(f"{report.remaining} from before remain")
        parts.append("; ".join(said) + ".")
    elif report.fixed:
        parts.append(f"({report.fixed} fixed)")
    return "\n".join(parts)


async def check_edits(diagnostics: Diagnostics | None, edits: Sequence[Edit], display: Display) -> str | None:
    """What the edits introduced, as text for the model; None when no server checks these files. Never raises:
    the edit is done whatever its check does."""
    if diagnostics is None or not any(diagnostics.handles(edit.path) for edit in edits):
        return None
    wait = diagnostics.edit_wait
    try:
        with anyio.fail_after(wait + 2.0):  # its own bound, and one more for a source that overstays it
            reports = await diagnostics.after_edits(edits, wait)
    except Exception:
        log.exception("checking an edit failed")
        return None
    texts = [text for report in reports if (text := edit_report_text(report, display, wait))]
    return "\n".join(texts) or None


def problem_report_text(report: ProblemReport, display: Display) -> str:
    lines: list[str] = []
    checked = len(report.checked)
    if report.problems:
        files = len({problem.path for problem in report.problems})
        count = len(report.problems)
        what = f"{count} problem{'s' if count > 1 else ''} in {files} of {checked} file{'s' if checked > 1 else ''}"
        lines.append(f"{report.checker}: {what}:")
        lines += _listed(report.problems, MAX_LISTED, display, "(ask about one file or folder to see them)")
    elif checked:
        lines.append(f"{report.checker}: no problems in {checked} file{'s' if checked > 1 else ''}.")
    if report.stopped is not None:
        lines.append(f"{report.checker} stopped ({report.stopped}).")
    if report.late:
        shown = ", ".join(display(path) for path in report.late[:5]) + (", ..." if len(report.late) > 5 else "")
        lines.append(f"{report.checker} had not checked {len(report.late)} file(s) in time: {shown}.")
    return "\n".join(lines)
