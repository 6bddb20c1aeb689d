"""Fixtures for the scripted model server tests: a running server and litellm, imported lazily."""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType

import pytest

from coder_agent.scripted.server import ScriptedModelServer


@pytest.fixture(scope="session")
def litellm() -> ModuleType:
    import litellm

    litellm.suppress_debug_info = True
    return litellm


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as srv:
        yield srv
