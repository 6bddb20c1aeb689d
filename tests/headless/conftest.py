"""Fixtures for the `coder-agent run` tests: a scripted model server, a workspace, the CLI's environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_agent.scripted.server import ScriptedModelServer
from tests.headless.helpers import REPO_ROOT, EnvFactory
from tests.support.acp_client import base_env


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def cli_env(srv: ScriptedModelServer, home: Path) -> EnvFactory:
    """`cli_env(CODER_AGENT_X="1", CODER_AGENT_MODEL=None)`: the CLI's environment; None drops a variable."""

    def make(**overrides: str | None) -> dict[str, str]:
        env: dict[str, str | None] = {
            **base_env(),
            "PYTHONPATH": str(REPO_ROOT),
            "CODER_AGENT_MODEL": "openai/scripted",
            "CODER_AGENT_API_BASE": srv.url,
            "CODER_AGENT_API_KEY": "sk-test",
            "CODER_AGENT_HOME": str(home),
            "CODER_AGENT_RETRY_BASE_DELAY": "0.01",
            "CODER_AGENT_MAX_RETRIES": "1",
            "CODER_AGENT_REQUEST_TIMEOUT": "20",
        }
        env.update(overrides)
        return {key: value for key, value in env.items() if value is not None}

    return make
