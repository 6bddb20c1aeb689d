"""Fixtures for the `coder-agent run` tests: a scripted model server, a workspace, the CLI's environment, and
the run in this process.
"""

from __future__ import annotations

import io
import logging
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from coder_agent.scripted.server import ScriptedModelServer
from tests.support.acp_client import base_env
from tests.support.headless import run_main
from tests.support.run_helpers import REPO_ROOT, EnvFactory, Ran, RunInProcess


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


@pytest.fixture
def root_logging() -> Iterator[None]:
    """The run sets up logging for its process; in this one, each test's handlers go again after it."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in root.handlers:
        if handler not in handlers:
            handler.close()
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.fixture
def run_cli_here(
    cli_env: EnvFactory,
    workspace: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    root_logging: None,
) -> RunInProcess:
    """`coder-agent run ARGS` in this process, as the process would run it: its environment (only `cli_env`'s
    CODER_AGENT_ variables), its folder, its stdin (`stdin`, else empty), and what it wrote to fds 1 and 2."""

    def run(args: Sequence[str], stdin: str = "", **env: str | None) -> Ran:
        with monkeypatch.context() as patch:
            for name in [n for n in os.environ if n.startswith("CODER_AGENT_")]:
                patch.delenv(name)
            for name, value in cli_env(**env).items():
                if name.startswith("CODER_AGENT_"):
                    patch.setenv(name, value)
            patch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # not the user's own settings
            patch.chdir(workspace)
            patch.setattr(sys, "stdin", io.StringIO(stdin))
            capfd.readouterr()
            code = run_main(list(args))
            out, err = capfd.readouterr()
        return Ran(code, out, err)

    return run
