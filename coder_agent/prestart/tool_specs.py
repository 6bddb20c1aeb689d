"""The built-in tools' specs (what the model is offered) as data, for the early first model call.

Each `Tool.spec()` is made with pydantic; the early call is sent before pydantic is imported, so it reads the
same specs from `tool_specs.json`, which `python -m coder_agent.agent.tools.specs --write` writes from the tools.
A test checks that the file still says exactly what the tools say (key order included: the runtime compares
request bodies byte for byte).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

SPECS_FILE = Path(__file__).with_name("tool_specs.json")


@cache
def builtin_specs() -> list[dict[str, Any]]:
    """`[tool.spec() for tool in builtin_tools()]`, read from `tool_specs.json` once (shared: do not change it)."""
    specs: list[dict[str, Any]] = json.loads(SPECS_FILE.read_text(encoding="utf-8"))
    return specs
