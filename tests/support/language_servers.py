"""Language servers in tests: the small test server (`lsp_server_script.py`) configured as a user would, and
the processes running in a folder, seen from /proc independently of the code under test (a language server runs
in its root; once an edit's result carries its diagnostics, it is running)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from coder_agent.lsp.specs import ServerSpec

SCRIPT = str(Path(__file__).parent / "lsp_server_script.py")
FAKE_EXTENSION = ".fake"

needs_basedpyright = pytest.mark.skipif(
    shutil.which("basedpyright-langserver") is None
    and not Path(sys.executable).with_name("basedpyright-langserver").exists(),
    reason="basedpyright (the test extra) is not installed",
)


def fake_table(*flags: str) -> dict[str, Any]:
    """The `[lsp.fake]` table of the test server with `flags`, for `.fake` files."""
    return {"command": sys.executable, "args": [SCRIPT, *flags], "extensions": [FAKE_EXTENSION]}


def fake_specs(*flags: str) -> list[ServerSpec]:
    """The configured servers with the test server's table (the defaults stay, for their own files)."""
    from coder_agent.config.language_servers import LanguageServerConfig
    from coder_agent.lsp.specs import configured

    specs, problems = configured({"fake": LanguageServerConfig.model_validate(fake_table(*flags))})
    assert not problems
    return specs


def running_in(folder: Path) -> list[int]:
    """The live processes whose working directory is `folder` (a language server runs in its root)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if cwd == str(folder) and stat[stat.rfind(")") + 2] not in "ZX":
            found.append(int(entry.name))
    return found
