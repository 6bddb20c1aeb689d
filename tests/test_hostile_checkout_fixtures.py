"""The hostile-checkout fixtures: the README a reviewer reads lists exactly the cases the builder lays out."""

from __future__ import annotations

import re
import stat
from pathlib import Path

from tests.support.hostile_checkout import FIXTURES, SECRET, cases, lay_out


def test_the_readme_lists_every_case_and_only_those() -> None:
    readme = (FIXTURES / "README.md").read_text(encoding="utf-8")
    listed = re.findall(r"^\| `([a-z0-9-]+)` \|", readme, flags=re.MULTILINE)
    assert sorted(listed) == sorted(cases())
    for name in listed:  # each names the test that shows it, and that test exists
        row = next(line for line in readme.splitlines() if line.startswith(f"| `{name}` |"))
        for test in re.findall(r"`(tests/[\w/]+\.py)`", row):
            assert (FIXTURES.parents[2] / test).is_file(), f"{name}: {test} does not exist"


def test_every_case_is_laid_out_as_it_says(tmp_path: Path) -> None:
    for case in cases().values():  # one checkout each: several are AGENTS.md
        checkout = lay_out([case.name], tmp_path / case.name / "project", tmp_path / case.name / "home")
        assert SECRET in checkout.credentials.read_text()
        path = (checkout.home if case.where == "home" else checkout.project) / case.path
        mode = path.lstat().st_mode
        if case.kind == "link":
            assert stat.S_ISLNK(mode), case.name
        elif case.kind == "fifo":
            assert stat.S_ISFIFO(mode), case.name
        elif case.kind == "huge":
            assert stat.S_ISREG(mode) and path.stat().st_size == case.size, case.name
