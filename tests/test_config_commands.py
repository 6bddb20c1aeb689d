"""`coder-agent config`, `doctor` and `rules`: what they say, and that they never print a key."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from coder_agent.agent.permissions.lasting_rules import Rule
from coder_agent.agent.permissions.rules_file import RuleFile
from coder_agent.cli.config import config_text
from coder_agent.cli.doctor import Report, mcp_servers, run_checks
from coder_agent.cli.main import main
from coder_agent.config.keystore import KeyStore
from coder_agent.config.settings import Settings
from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.hostile_checkout import lay_out

KEY = "sk-openai-saved-0123456789"
TEST_SERVER = str(Path(__file__).parent / "support" / "mcp_server_script.py")


def load(user: Path, **extra: str) -> tuple[Settings, dict[str, str]]:
    # Language servers off: doctor would start each one (tests/lsp/test_doctor_servers.py checks that).
    environ = {"HOME": str(user), "CODER_AGENT_HOME": str(user / "data"), "CODER_AGENT_LANGUAGE_SERVERS": "0", **extra}
    return Settings.load(environ, lenient=True), environ


def config_folder(user: Path) -> Path:
    return user / ".config" / "coder-agent"


def test_config_says_where_each_setting_came_from_and_never_shows_a_key(tmp_path: Path) -> None:
    KeyStore(config_folder(tmp_path)).save("OPENAI_API_KEY", KEY, where="file")
    (config_folder(tmp_path) / "config.toml").write_text('model = "openai/gpt-4.1"\n')
    settings, environ = load(
        tmp_path,
        CODER_AGENT_API_KEY="sk-editor-key-99999999",
        CODER_AGENT_SERVE_TOKEN="serve-token-77777777",
        CODER_AGENT_MAX_RETRIES="x",
    )
    text = config_text(settings, environ)
    assert KEY not in text and "sk-editor-key-99999999" not in text and "serve-token-77777777" not in text
    lines = {line.split()[0]: line for line in text.splitlines() if line.startswith("CODER_AGENT_")}
    assert "openai/gpt-4.1" in lines["CODER_AGENT_MODEL"] and "config.toml" in lines["CODER_AGENT_MODEL"]
    assert "(set)" in lines["CODER_AGENT_API_KEY"] and "[environment]" in lines["CODER_AGENT_API_KEY"]
    assert "(set)" in lines["CODER_AGENT_SERVE_TOKEN"]
    assert "keys saved by login: OPENAI_API_KEY" in text
    assert "PROBLEM: CODER_AGENT_MAX_RETRIES" in text


def test_config_says_which_key_is_missing(tmp_path: Path) -> None:
    settings, environ = load(tmp_path, CODER_AGENT_MODEL="anthropic/claude-sonnet-4-5")
    assert "MISSING: set ANTHROPIC_API_KEY" in config_text(settings, environ)


@pytest.mark.anyio
async def test_doctor_sends_one_tiny_request_and_checks_the_mcp_servers(
    tmp_path: Path, srv: ScriptedModelServer
) -> None:
    srv.enqueue(Reply.text("OK"))
    (config_folder(tmp_path)).mkdir(parents=True)
    servers = {
        "good": {"command": sys.executable, "args": [TEST_SERVER, "stdio"]},
        "broken": {"command": sys.executable, "args": ["-c", "pass"]},
    }
    (config_folder(tmp_path) / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    settings, _ = load(
        tmp_path,
        CODER_AGENT_MODEL="openai/scripted",
        CODER_AGENT_API_BASE=srv.url,
        OPENAI_API_KEY=KEY,
        CODER_AGENT_MCP_TIMEOUT="20",
    )
    report = await run_checks(settings, tmp_path)
    text = "\n".join(report.lines)
    assert "ok   the model answered" in text
    [request] = srv.requests
    assert request.body["max_tokens"] <= 16 and request.headers["authorization"] == f"Bearer {KEY}"
    assert any(line.startswith("ok   MCP server good:") and "tools" in line for line in report.lines)
    assert any(line.startswith("FIX  MCP server broken:") for line in report.lines)
    assert report.fixes == 1 and KEY not in text


@pytest.mark.anyio
async def test_doctor_says_what_to_fix_when_the_provider_refuses_the_key(
    tmp_path: Path, srv: ScriptedModelServer
) -> None:
    srv.enqueue(Reply.error(401, "invalid x-api-key"))
    settings, _ = load(tmp_path, CODER_AGENT_MODEL="openai/scripted", CODER_AGENT_API_BASE=srv.url)
    report = await run_checks(settings, tmp_path)
    [fix] = [line for line in report.lines if line.startswith("FIX")]
    assert "did not answer" in fix and "rejected the credentials" in fix and "(401)" in fix


@pytest.mark.anyio
async def test_doctor_without_a_model_says_to_log_in(tmp_path: Path) -> None:
    settings, _ = load(tmp_path)
    report = await run_checks(settings, tmp_path)
    assert report.fixes == 1 and "coder-agent login" in report.lines[0]


def test_doctor_does_not_read_a_projects_mcp_json_that_leads_outside_it(tmp_path: Path) -> None:
    checkout = lay_out(["mcp-json-outside"], tmp_path / "project", tmp_path / "home")
    settings, _ = load(tmp_path / "user")
    report = Report()
    assert mcp_servers(settings, checkout.project, report) == []
    target = checkout.home / "planted-mcp.json"
    why = f"it leads outside the project's folders ({target})"
    assert report.lines == [f"     the project's {checkout.project / '.mcp.json'} was not read: {why}"]


def test_rules_lists_and_removes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("CODER_AGENT_CONFIG_DIR", raising=False)
    book = RuleFile(config_folder(tmp_path))
    book.add(Rule("allow", tool="run_command", command="npm test", project=str(tmp_path)))
    book.add(Rule("reject", mcp="github/delete_*"))
    with pytest.raises(SystemExit) as listed:
        main(["rules"])
    out = capsys.readouterr().out
    assert listed.value.code == 0
    assert f"1. allow run_command `npm test` commands in {tmp_path}" in out
    assert "2. reject MCP github/delete_* in all projects" in out
    with pytest.raises(SystemExit) as removed:
        main(["rules", "remove", "1"])
    assert removed.value.code == 0 and "removed: allow run_command" in capsys.readouterr().out
    assert book.load().rules == [Rule("reject", mcp="github/delete_*")]
    with pytest.raises(SystemExit) as unknown:
        main(["rules", "remove", "7"])
    assert unknown.value.code == 1 and "no rule 7" in capsys.readouterr().err
