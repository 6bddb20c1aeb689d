"""`prestart/tool_specs.json` (what the early first model call offers) says exactly what the built-in tools say."""

from __future__ import annotations

import json
import subprocess
import sys

from coder_agent.agent.tools import builtin_tools
from coder_agent.agent.tools.specs import WRITE_COMMAND, specs_text
from coder_agent.prestart.tool_specs import builtin_specs


def test_the_written_specs_are_the_tools_specs() -> None:
    current = [tool.spec() for tool in builtin_tools()]
    # Key order matters: the runtime compares the early request's body with its own byte for byte.
    assert json.dumps(builtin_specs()) == json.dumps(current), (
        f"coder_agent/prestart/tool_specs.json is out of date: run `{WRITE_COMMAND}`"
    )
    assert json.dumps(builtin_specs(), ensure_ascii=False) == json.dumps(current, ensure_ascii=False)


def test_the_file_is_as_the_write_command_writes_it() -> None:
    from coder_agent.prestart.tool_specs import SPECS_FILE

    assert SPECS_FILE.read_text(encoding="utf-8") == specs_text(builtin_specs()), f"run `{WRITE_COMMAND}`"


def test_reading_them_imports_no_runtime() -> None:
    code = (
        "import sys; from coder_agent.prestart.tool_specs import builtin_specs; specs = builtin_specs(); "
        "print(len(specs), sorted({'pydantic', 'anyio', 'asyncio', 'logging'} & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == f"{len(builtin_tools())} []"
