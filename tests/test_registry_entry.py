"""The ACP Registry entry (registry/coder-agent/): the fields the registry's format asks for, in step with the package.

The registry's JSON schema is not vendored here (it is someone else's file); the checks below are the rules it and
the registry's CI state: the required fields and their shapes, the id naming the folder, a pinned uvx package.
"""

from __future__ import annotations

import json
import re
import tomllib
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from coder_agent import __version__
from coder_agent.cli.main import SUPPORTED, platform_problem
from coder_agent.prestart.capabilities import TERMINAL_LOGIN_ARGS

ROOT = Path(__file__).resolve().parents[1]
ENTRY = ROOT / "registry" / "coder-agent"
REQUIRED = {"id": str, "name": str, "version": str, "description": str, "distribution": dict}
COLOURLESS = {"currentcolor", "none", "inherit"}


def agent() -> dict[str, object]:
    return dict(json.loads((ENTRY / "agent.json").read_text()))


def project() -> dict[str, object]:
    return dict(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"])


def test_agent_json_has_the_fields_the_registry_requires() -> None:
    entry = agent()
    for field, kind in REQUIRED.items():
        assert isinstance(entry.get(field), kind) and entry[field], field
    assert re.fullmatch(r"[a-z0-9][a-z0-9-]*", str(entry["id"]))
    assert entry["id"] == ENTRY.name  # the registry's folder is named after the id
    assert set(entry["distribution"]) <= {"npx", "uvx", "binary"}  # type: ignore[arg-type]
    for field in ("authors",):
        assert isinstance(entry.get(field), list) and all(isinstance(author, str) for author in entry[field])  # type: ignore[union-attr]


def test_agent_json_meets_the_newer_registry_rules_too() -> None:
    entry = agent()
    assert re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", str(entry["version"]))  # anchored in newer schemas
    assert str(entry.get("license_url", "")).startswith("https://")  # required by newer schemas


def test_the_uvx_distribution_runs_this_packages_acp_command_at_this_version() -> None:
    entry, package = agent(), project()
    assert entry["version"] == package["version"] == __version__
    uvx = entry["distribution"]["uvx"]  # type: ignore[index]
    # The registry's CI checks the pin against the version; uvx runs the executable named like the package.
    assert uvx == {"package": f"{package['name']}=={package['version']}", "args": ["acp"]}
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts[str(package["name"])] == "coder_agent.cli.main:main"
    assert entry["license"] == package["license"]
    assert TERMINAL_LOGIN_ARGS == ["login"]  # appended: `coder-agent acp login`; replacing: `coder-agent login`


def test_the_icon_is_a_monochrome_16x16_svg() -> None:
    svg = ElementTree.parse(ENTRY / "icon.svg").getroot()
    assert svg.tag == "{http://www.w3.org/2000/svg}svg"
    assert svg.get("width") == svg.get("height") == "16" and svg.get("viewBox") == "0 0 16 16"
    for element in svg.iter():
        for attribute in ("fill", "stroke", "color", "stop-color"):
            value = element.get(attribute)
            assert value is None or value.strip().lower() in COLOURLESS, f"{attribute}={value} is a colour"
        assert "style" not in element.attrib


def test_the_entry_names_its_repository_and_the_platforms_it_runs_on() -> None:
    """The registry offers the agent to every platform: the entry says which it runs on (its schema has no field
    for that with a uvx distribution), as the package's classifiers do; Windows is refused at start."""
    entry, package = agent(), project()
    assert entry["repository"] == package["urls"]["Repository"]  # type: ignore[index]
    assert str(entry["repository"]).startswith("https://")
    assert "Linux and macOS" in str(entry["description"])
    assert SUPPORTED == "Linux and macOS"
    assert sorted(package["classifiers"]) == ["Operating System :: MacOS", "Operating System :: POSIX :: Linux"]  # type: ignore[arg-type]


def test_an_unsupported_platform_is_refused_at_start_with_a_clear_message() -> None:
    assert platform_problem("posix", "linux") is None and platform_problem("posix", "darwin") is None
    problem = platform_problem("nt", "win32")
    assert problem is not None and "Linux and macOS" in problem and "win32" in problem and "WSL" in problem
