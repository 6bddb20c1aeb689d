"""Test-wide set-up: litellm must never reach the internet, whichever test imports it first."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("REPEATED_STREAMING_CHUNK_LIMIT", "100000")


from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from coder_agent.scripted.server import ScriptedModelServer

if TYPE_CHECKING:
    from coder_agent.config.settings import Settings


@pytest.fixture(autouse=True)
def not_the_callers_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads the settings, keys or sessions of whoever runs the suite: their `CODER_AGENT_*` variables
    are dropped, and the XDG folders point into the test's own (empty) folder. A test that wants one sets it."""
    for name in [name for name in os.environ if name.startswith("CODER_AGENT_")]:
        monkeypatch.delenv(name)
    # Language servers start only in the tests about them (a Python edit would start basedpyright anywhere else).
    monkeypatch.setenv("CODER_AGENT_LANGUAGE_SERVERS", "0")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "caller-xdg" / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "caller-xdg" / "data"))


@pytest.fixture
def anyio_backend() -> str:
    # litellm is asyncio-only; everything runs on anyio's asyncio backend.
    return "asyncio"


@pytest.fixture
def srv() -> Iterator[ScriptedModelServer]:
    """A scripted OpenAI-compatible model server on 127.0.0.1; enqueue replies before prompting."""
    with ScriptedModelServer() as server:
        yield server


@pytest.fixture
def make_settings(srv: ScriptedModelServer, tmp_path: Path) -> Callable[..., Settings]:
    """`make_settings(**overrides)`: the agent's settings for the scripted model, with a private home."""
    from tests.support.inproc import test_settings  # not at collection: the agent's modules load on use

    def make(**overrides: Any) -> Settings:
        return test_settings(tmp_path / "home", srv.url, **overrides)

    return make


@pytest.fixture
def settings(make_settings: Callable[..., Settings]) -> Settings:
    return make_settings()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The folder the agent starts in and the session's cwd (so no stray `.env` is read)."""
    path = tmp_path / "workspace"
    path.mkdir()
    return path


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest first: the eval gate, then the tests that start processes, then the rest (in their order).

    Alone this changes nothing; with `-n 2` (pytest-xdist) the long ones start at once instead of last.
    """

    def rank(item: pytest.Item) -> int:
        if item.nodeid.startswith("tests/evals/test_gate.py"):
            return 0
        return 1 if item.get_closest_marker("e2e") else 2

    items.sort(key=rank)
