"""A `LiteLLMModel` on a scripted server, and collecting what it streams: for the tests of litellm's path."""

from __future__ import annotations

from contextlib import aclosing

import anyio

from coder_agent.llm.base import ModelEvent
from coder_agent.llm.litellm_model import LiteLLMModel, ModelConfig
from coder_agent.llm.messages import TextPart, UserMessage
from coder_agent.scripted.server import ScriptedModelServer

MESSAGES = [UserMessage(parts=[TextPart(text="hi")])]


def model_for(srv: ScriptedModelServer, **overrides: float | int) -> LiteLLMModel:
    config = ModelConfig(
        model="openai/scripted",
        api_base=srv.url,
        api_key="sk-test",
        timeout=float(overrides.get("timeout", 5.0)),
        max_retries=int(overrides.get("max_retries", 2)),
        retry_base_delay=float(overrides.get("retry_base_delay", 0.01)),
    )
    return LiteLLMModel(config)


async def collect(model: LiteLLMModel, tools: list[dict[str, object]] | None = None) -> list[ModelEvent]:
    with anyio.fail_after(30):
        async with aclosing(model.stream(MESSAGES, tools or [])) as events:
            return [event async for event in events]
