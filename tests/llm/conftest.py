"""The contract helpers assert on both paths' outcomes: let pytest show the difference when they disagree."""

from __future__ import annotations

from types import ModuleType

import pytest

pytest.register_assert_rewrite("tests.support.contract")


@pytest.fixture(scope="module")
def litellm() -> ModuleType:
    """litellm, the oracle the agent's own adapters and model facts are compared with."""
    from coder_agent.llm.loader import import_litellm

    return import_litellm()
