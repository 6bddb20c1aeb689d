"""With an unusable setting the agent stays up; each request that needs it is refused with what to fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_agent.config.settings import Settings
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.inproc import inproc_raw

pytestmark = pytest.mark.anyio


def broken_settings(home: Path, api_base: str, **env: str) -> Settings:
    environ = {
        "HOME": str(home.parent),
        "CODER_AGENT_HOME": str(home),
        "CODER_AGENT_MODEL": "openai/scripted",
        "CODER_AGENT_API_BASE": api_base,
        "CODER_AGENT_API_KEY": "sk-test",
        **env,
    }
    return Settings.load(environ, user_files=False, lenient=True)


async def test_a_bad_retry_setting_refuses_prompts_only_and_names_the_setting(
    srv: ScriptedModelServer, tmp_path: Path, workspace: Path
) -> None:
    settings = broken_settings(tmp_path / "home", srv.url, CODER_AGENT_MAX_RETRIES="lots")
    assert settings.max_retries == 3  # its default meanwhile
    async with inproc_raw(settings) as raw:
        await raw.send_json({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
        assert "result" in await raw.read_reply(0)
        new = {"cwd": str(workspace), "mcpServers": []}
        await raw.send_json({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": new})
        session_id = (await raw.read_reply(1))["result"]["sessionId"]
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
        await raw.send_json({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt})
        refused = await raw.read_reply(2)
    error = refused["error"]
    assert error["data"] == {"settings": ["CODER_AGENT_MAX_RETRIES"], "details": error["message"]}
    assert error["message"].startswith("CODER_AGENT_MAX_RETRIES is invalid: Input should be a valid integer")
    assert "restart the agent" in error["message"]
    assert srv.requests == []


def test_strict_loading_still_raises_naming_every_bad_setting(tmp_path: Path) -> None:
    from coder_agent.config.settings import SettingsError

    environ = {"HOME": str(tmp_path), "CODER_AGENT_MAX_RETRIES": "x", "CODER_AGENT_LOG_LEVEL": "LOUD"}
    with pytest.raises(SettingsError) as raised:
        Settings.load(environ, user_files=False)
    assert "CODER_AGENT_MAX_RETRIES" in str(raised.value) and "CODER_AGENT_LOG_LEVEL" in str(raised.value)
