"""Fixtures for the scripted model server tests: a running server and litellm, imported lazily."""

from __future__ import annotations

from types import ModuleType

import pytest


@pytest.fixture(scope="session")
def litellm() -> ModuleType:
    import litellm

    litellm.suppress_debug_info = True
    return litellm
