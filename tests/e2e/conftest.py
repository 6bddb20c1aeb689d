"""Shared fixtures for the end-to-end tests: a scripted model server, a workspace, and the agent's env."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_agent.scripted.server import ScriptedModelServer
from tests.support.agent_env import REPO_ROOT, EnvFactory


@pytest.fixture
def agent_env(srv: ScriptedModelServer, tmp_path: Path) -> EnvFactory:
    """`agent_env(CODER_AGENT_X="1", CODER_AGENT_MODEL=None)`: the agent's env; None drops a variable.

    The model is the scripted server; retries are fast. `PYTHONPATH` makes the agent process run the
    `coder_agent` beside these tests, whatever copy is installed. `XDG_CONFIG_HOME` keeps the user's own
    `~/.config/coder-agent/.env` out of the tests (a test may write one there).
    """

    def make(**overrides: str | None) -> dict[str, str]:
        env: dict[str, str | None] = {
            "PYTHONPATH": str(REPO_ROOT),
            "CODER_AGENT_MODEL": "openai/scripted",
            "CODER_AGENT_API_BASE": srv.url,
            "CODER_AGENT_API_KEY": "sk-test",
            "CODER_AGENT_HOME": str(tmp_path / "home"),
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "CODER_AGENT_RETRY_BASE_DELAY": "0.01",
            "CODER_AGENT_MAX_RETRIES": "2",
            "CODER_AGENT_REQUEST_TIMEOUT": "20",
        }
        env.update(overrides)
        return {key: value for key, value in env.items() if value is not None}

    return make
