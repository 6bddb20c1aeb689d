"""A pytest plugin (`-p swebench_outcomes`): each test's outcome by node id, written as JSON on exit.

Outcomes: passed, failed, skipped, xfailed, xpassed, error (setup or teardown failed). The file is
`$SWEBENCH_OUTCOMES`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

_outcomes: dict[str, str] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    xfail = hasattr(report, "wasxfail")
    if report.when == "call":
        if xfail:
            _outcomes[report.nodeid] = "xfailed" if report.skipped else "xpassed"
        else:
            _outcomes[report.nodeid] = report.outcome
    elif report.failed:  # setup or teardown
        _outcomes[report.nodeid] = "error"
    elif report.skipped and report.when == "setup":
        _outcomes[report.nodeid] = "xfailed" if xfail else "skipped"


def pytest_sessionfinish(session: pytest.Session) -> None:
    target = os.environ.get("SWEBENCH_OUTCOMES")
    if target:
        Path(target).write_text(json.dumps(_outcomes, indent=2) + "\n", encoding="utf-8")
