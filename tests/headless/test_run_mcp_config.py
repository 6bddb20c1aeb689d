"""`coder-agent run --mcp-config FILE`: the file's servers join the run (the user named it: no question asked)."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_agent.cli.run import _settings, parser
from coder_agent.config.settings import SettingsError


def test_mcp_config_files_are_added_to_the_runs_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODER_AGENT_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("CODER_AGENT_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("CODER_AGENT_MODEL", "openai/x")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.json").write_text('{"mcpServers": {}}')
    (tmp_path / "b.json").write_text('{"mcpServers": {}}')
    args = parser().parse_args(["--prompt", "x", "--mcp-config", "a.json", "--mcp-config", str(tmp_path / "b.json")])
    assert _settings(args).mcp_config[-2:] == [str(tmp_path / "a.json"), str(tmp_path / "b.json")]
    missing = parser().parse_args(["--prompt", "x", "--mcp-config", "nope.json"])
    with pytest.raises(SettingsError, match=r"nope\.json"):
        _settings(missing)
