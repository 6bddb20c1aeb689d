"""`coder-agent doctor` names the rg the search tools run, or says they search in Python and how to fix it."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_agent.agent.workspace.ripgrep import locate
from coder_agent.cli.doctor import Report, check_ripgrep
from coder_agent.config.settings import Settings

pytestmark = pytest.mark.anyio


def load(user: Path, **extra: str) -> Settings:
    return Settings.load({"HOME": str(user), "CODER_AGENT_HOME": str(user / "data"), **extra}, lenient=True)


async def test_doctor_names_the_wheels_rg_its_version_and_pcre2(tmp_path: Path) -> None:
    report = Report()
    await check_ripgrep(load(tmp_path), report)
    assert report.lines == [f"ok   ripgrep 15.2.0 at {locate(None)} (with PCRE2)"] and not report.fixes


async def test_doctor_says_what_to_fix_when_the_rg_named_is_missing_or_is_no_rg(tmp_path: Path) -> None:
    for program, why in [(str(tmp_path / "rg"), f"no rg at {tmp_path / 'rg'}"), ("/bin/true", "is not ripgrep")]:
        report = Report()
        await check_ripgrep(load(tmp_path, CODER_AGENT_RIPGREP=program), report)
        [line] = report.lines
        assert line.startswith("FIX  ripgrep: ") and why in line and report.fixes == 1
        assert "search with the built-in Python code" in line and "check CODER_AGENT_RIPGREP" in line


async def test_doctor_says_the_search_is_in_python_when_ripgrep_is_off(tmp_path: Path) -> None:
    report = Report()
    await check_ripgrep(load(tmp_path, CODER_AGENT_RIPGREP="off"), report)
    assert report.lines == [
        "     ripgrep is off (CODER_AGENT_RIPGREP): grep, glob and list_dir search with the built-in Python code "
        "(slower, no .ignore/.rgignore)"
    ]
