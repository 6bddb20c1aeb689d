"""`coder-agent doctor` lists each language server: found and answering (with its start-up time), a default one
missing (said, nothing to fix: its files are simply not checked), a configured one missing (to fix)."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_agent.cli.doctor import Report, check_language_servers
from coder_agent.config.settings import Settings
from tests.support.language_servers import fake_table

pytestmark = pytest.mark.anyio


async def test_doctor_lists_each_language_server_it_found_and_what_is_missing(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no typescript-language-server, whatever the machine has
    lsp = {
        "python": {"enabled": False},
        "fake": fake_table(),
        "gone": {"command": "no-such-language-server-y", "extensions": [".gone"]},
    }
    settings = Settings.model_validate({"home": tmp_path / "home", "lsp": lsp})
    report = Report()
    await check_language_servers(settings, workspace, report)
    [fake] = [line for line in report.lines if " fake language server" in line]
    assert fake.startswith("ok   fake language server: fake (") and "answered in" in fake
    assert "     no typescript language server: typescript-language-server was not found on PATH" in report.lines
    assert "FIX  no gone language server: no-such-language-server-y was not found on PATH" in report.lines
    assert report.fixes == 1 and not any("python language server" in line for line in report.lines)


async def test_doctor_says_when_language_servers_are_off(tmp_path: Path, workspace: Path) -> None:
    settings = Settings.model_validate({"home": tmp_path / "home", "language_servers": False})
    report = Report()
    await check_language_servers(settings, workspace, report)
    assert report.lines == ["     language servers are off (language_servers): edits are not checked for problems"]
