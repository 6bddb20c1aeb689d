"""What the model reads of a language server's findings: an edit's new problems (capped), none, not in time,
the server gone; and the `diagnostics` tool's list."""

from __future__ import annotations

from coder_agent.agent.diagnostics import EditReport, Problem, ProblemReport
from coder_agent.agent.tools.problems import MAX_EDIT_PROBLEMS, edit_report_text, problem_report_text


def shown(path: str) -> str:
    return path.removeprefix("/w/")


def problem(line: int, severity: str = "error", path: str = "/w/a.py") -> Problem:
    return Problem(path, line, 3, severity, f"bad {line}", "code")  # type: ignore[arg-type]


def test_new_problems_are_listed_errors_first_and_capped() -> None:
    new = (problem(40, "warning"), *(problem(line) for line in range(1, 13)))
    text = edit_report_text(EditReport("pyright", ("/w/a.py",), new, fixed=1), shown, 3)
    lines = text.splitlines()
    assert lines[0] == "13 new problems (pyright):"
    assert lines[1] == "a.py:1:3: error: bad 1 [code]"
    assert len(lines) == 1 + MAX_EDIT_PROBLEMS + 2
    assert lines[-2] == "... and 3 more (the diagnostics tool lists every problem)"
    assert lines[-1] == "(1 fixed)"


def test_no_new_problems_says_what_was_fixed_and_what_remains() -> None:
    report = EditReport("pyright", ("/w/a.py",), (), fixed=2, remaining=1)
    assert edit_report_text(report, shown, 3) == "No new problems (pyright); 2 fixed; 1 from before remain."


def test_a_check_not_done_in_time_says_why_and_what_comes_next() -> None:
    slow = EditReport("pyright", ("/w/a.py", "/w/b.py"), late=True)
    starting = EditReport("pyright", ("/w/a.py",), late=True, starting=True)
    assert edit_report_text(slow, shown, 3).startswith("pyright had not finished checking a.py, b.py within 3 s;")
    assert edit_report_text(starting, shown, 3).startswith("pyright is still starting: a.py not checked yet;")
    gone = EditReport("pyright", ("/w/a.py",), stopped="it exited with code 1")
    assert edit_report_text(gone, shown, 3) == (
        "pyright stopped (it exited with code 1); its files are no longer checked in this session."
    )


def test_the_diagnostics_tool_lists_problems_and_what_it_did_not_check() -> None:
    report = ProblemReport(
        "pyright", ("/w/a.py", "/w/b.py"), (problem(2), problem(1, "warning", "/w/b.py")), late=("/w/c.py",)
    )
    assert problem_report_text(report, shown).splitlines() == [
        "pyright: 2 problems in 2 of 2 files:",
        "a.py:2:3: error: bad 2 [code]",
        "b.py:1:3: warning: bad 1 [code]",
        "pyright had not checked 1 file(s) in time: c.py.",
    ]
    assert problem_report_text(ProblemReport("pyright", ("/w/a.py",)), shown) == "pyright: no problems in 1 file."
