"""Fixtures of the remote server tests: settings pointing at the scripted model, a private home."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from coder_agent.scripted.server import ScriptedModelServer
from coder_agent.settings import Settings
from tests.support.inproc import test_settings


@pytest.fixture
def settings(srv: ScriptedModelServer, tmp_path: Path) -> Settings:
    return test_settings(tmp_path / "home", srv.url)


@pytest.fixture
def make_settings(srv: ScriptedModelServer, tmp_path: Path) -> Any:
    def make(**overrides: Any) -> Settings:
        return test_settings(tmp_path / "home", srv.url, **overrides)

    return make
