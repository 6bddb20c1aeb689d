"""Contract checks that concern one model rather than a wire: both paths, the same request and outcome."""

from __future__ import annotations

import pytest

from coder_agent.scripted.script import Reply
from tests.support.contract import OPENAI, both

pytestmark = pytest.mark.anyio


async def test_a_known_openai_model_drops_the_reasoning_effort_as_litellm_does() -> None:
    outcome = await both(OPENAI, [Reply.text("ok")], model="openai/gpt-4o", reasoning_effort="low")
    assert outcome.texts() == ["ok"]
    assert "reasoning_effort" not in outcome.bodies[0]


async def test_a_model_unknown_to_litellm_gets_the_reasoning_effort() -> None:
    outcome = await both(OPENAI, [Reply.text("ok")], model="openai/my-local-model", reasoning_effort="low")
    assert outcome.bodies[0]["reasoning_effort"] == "low"
