"""evals may import coder_agent, never tests (tests import evals): the harness runs without the test tree."""

from __future__ import annotations

import ast
from pathlib import Path

EVALS = Path(__file__).resolve().parents[2] / "evals"


def _harness_sources() -> list[Path]:
    """The harness's and the suites' Python files; task folders (workspaces, hidden tests) are task data."""
    return [
        path
        for path in sorted(EVALS.rglob("*.py"))
        if not any((folder / "task.toml").is_file() for folder in path.parents if EVALS in folder.parents)
    ]


def _imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def test_no_evals_module_imports_the_tests_package() -> None:
    sources = _harness_sources()
    assert EVALS / "harness" / "wire.py" in sources and EVALS / "harness" / "cli.py" in sources
    offenders = {
        str(path.relative_to(EVALS)): sorted(name for name in _imported(path) if name.split(".")[0] == "tests")
        for path in sources
    }
    assert {path: names for path, names in offenders.items() if names} == {}
