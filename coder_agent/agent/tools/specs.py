"""Writing and checking `prestart/tool_specs.json`, the built-in tools' specs as the early first call reads them
(`prestart.tool_specs`): `python -m coder_agent.agent.tools.specs --write` after changing a tool's parameters or
description, `--check` (what a test does) to see that the file still says exactly what the tools say."""

from __future__ import annotations

import json
import sys
from typing import Any

from ...prestart.tool_specs import SPECS_FILE

WRITE_COMMAND = "python -m coder_agent.agent.tools.specs --write"


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
