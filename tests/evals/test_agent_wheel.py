"""The agent's wheel for `--sandbox docker` and Harbor is built once per state of its sources: a run, a test
worker or CI's image step that finds it in the cache takes it as it is (a `pip wheel` is seconds of CPU each
time), and a change to anything that goes into the wheel builds a new one. No docker needed."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from evals.harness.docker import agent_wheel

pytestmark = pytest.mark.e2e  # pip builds the wheels

PYPROJECT = """\
[build-system]
requires = ["hatchling>=1.25"]
build-backend = "hatchling.build"

[project]
name = "tiny-agent"
version = "0.1.0"
readme = "README.md"

[tool.hatch.build.targets.wheel]
packages = ["tiny_agent"]

[tool.hatch.build.targets.wheel.force-include]
"prompts" = "tiny_agent/prompts"
"""


def _project(root: Path) -> Path:
    (root / "tiny_agent").mkdir(parents=True)
    (root / "tiny_agent" / "__init__.py").write_text("VERSION = 1\n")
    (root / "prompts").mkdir()
    (root / "prompts" / "system.md").write_text("Be brief.\n")
    (root / "README.md").write_text("A tiny agent.\n")
    (root / "pyproject.toml").write_text(PYPROJECT)
    return root


def _member(wheel: Path, name: str) -> str:
    with zipfile.ZipFile(wheel) as archive:
        return archive.read(name).decode()


def test_the_wheel_is_built_once_per_state_of_what_goes_into_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALS_CACHE", str(tmp_path / "cache"))
    project = _project(tmp_path / "project")
    first = agent_wheel(project)
    built = first.stat().st_mtime_ns
    # Litter that never goes into a wheel (bytecode) changes nothing: the same file, not rebuilt.
    (project / "tiny_agent" / "__pycache__").mkdir()
    (project / "tiny_agent" / "__pycache__" / "__init__.cpython-311.pyc").write_bytes(b"\0")
    again = agent_wheel(project)
    assert again == first and again.stat().st_mtime_ns == built
    # A file the wheel takes from outside the package (force-include) is a source too.
    (project / "prompts" / "system.md").write_text("Be thorough.\n")
    changed = agent_wheel(project)
    assert changed != first and _member(changed, "tiny_agent/prompts/system.md") == "Be thorough.\n"
    assert first.is_file()  # an earlier wheel stays usable (a run may be using it)
