"""The built-in tools' specs (what the model is offered) as data, for the early first model call.

Each `Tool.spec()` is made with pydantic; the early call is sent before pydantic is imported, so it reads the
same specs from `specs.json`, written from the tools by `python -m coder_agent.agent.tools.specs --write`.
A test checks that the file still says exactly what the tools say (key order included: the runtime compares
request bodies byte for byte). Standard library only (the tools are imported only to write or check the file).
"""

from __future__ import annotations

import json
import sys
from functools import cache
from pathlib import Path
from typing import Any

SPECS_FILE = Path(__file__).with_name("specs.json")
WRITE_COMMAND = "python -m coder_agent.agent.tools.specs --write"


@cache
def builtin_specs() -> list[dict[str, Any]]:
    """`[tool.spec() for tool in builtin_tools()]`, read from `specs.json` once (shared: do not change it)."""
    specs: list[dict[str, Any]] = json.loads(SPECS_FILE.read_text(encoding="utf-8"))
    return specs


def specs_text(specs: list[dict[str, Any]]) -> str:
    return json.dumps(specs, indent=1, ensure_ascii=False) + "\n"


def current_specs() -> list[dict[str, Any]]:
    """The specs as the tools make them now (imports the tools, and pydantic)."""
    from . import builtin_tools

    return [tool.spec() for tool in builtin_tools()]


def main(argv: list[str]) -> int:
    if argv == ["--write"]:
        SPECS_FILE.write_text(specs_text(current_specs()), encoding="utf-8")
        sys.stdout.write(f"wrote {SPECS_FILE}\n")
        return 0
    if argv in ([], ["--check"]):
        written = SPECS_FILE.read_text(encoding="utf-8") if SPECS_FILE.exists() else None
        if written == specs_text(current_specs()):
            sys.stdout.write(f"{SPECS_FILE} is up to date\n")
            return 0
        sys.stderr.write(f"{SPECS_FILE} is out of date: run `{WRITE_COMMAND}`\n")
        return 1
    sys.stderr.write("usage: python -m coder_agent.agent.tools.specs [--check | --write]\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
