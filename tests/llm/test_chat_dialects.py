"""What the Chat Completions adapter keeps and sends back for a provider: Gemini's thought signatures on tool calls,
DeepSeek's reasoning after a tool call, nothing a strict provider refuses."""

from __future__ import annotations

from contextlib import aclosing

import anyio
import pytest

from coder_agent.llm.base import Completion
from coder_agent.llm.direct_model import DirectModel
from coder_agent.llm.messages import ChatMessage, SystemMessage, TextPart, ToolMessage, UserMessage
from coder_agent.llm.wire.config import ModelConfig
from coder_agent.llm.wire.routes import route_for
from coder_agent.scripted.script import FinishStep, ReasoningStep, Reply, ToolCallStep, UsageStep
from coder_agent.scripted.server import ScriptedModelServer

pytestmark = pytest.mark.anyio

TOOLS = [{"type": "function", "function": {"name": "grep", "parameters": {"type": "object", "properties": {}}}}]
HELLO: list[ChatMessage] = [SystemMessage(text="You code."), UserMessage(parts=[TextPart(text="hi")])]


def adapter(srv: ScriptedModelServer, model: str) -> DirectModel:
    config = ModelConfig(model=model, api_base=srv.url, api_key="k", max_retries=0)
    route = route_for(config, {})
    assert route is not None
    return DirectModel(config, route, cache_key="sess_1")


async def turn_with_a_tool_call(srv: ScriptedModelServer, model: str, first: Reply) -> list[dict[str, object]]:
    """A tool call, its result, the next call: the messages the provider was sent the second time."""
    srv.enqueue(first, Reply.text("done"))
    adapted = adapter(srv, model)
    with anyio.fail_after(30):
        async with aclosing(adapted.stream(HELLO, TOOLS)) as events:
            completion = [e async for e in events if isinstance(e, Completion)][-1]
        history = [*HELLO, completion.message, ToolMessage(tool_call_id="call_1", content="a.py:1")]
        async with aclosing(adapted.stream(history, TOOLS)) as events:
            _ = [e async for e in events]
    messages = srv.requests[1].body["messages"]
    assert isinstance(messages, list)
    return messages


async def test_geminis_thought_signature_goes_back_with_its_tool_call(srv: ScriptedModelServer) -> None:
    signature = {"google": {"thought_signature": "c2lnbmVk"}}
    call = ToolCallStep(name="grep", id="call_1", extra=signature)
    messages = await turn_with_a_tool_call(srv, "gemini/gemini-3-pro-preview", Reply(steps=[call, FinishStep()]))
    assert messages[2]["tool_calls"] == [  # type: ignore[index]
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "grep", "arguments": "{}"},
            "extra_content": signature,
        }
    ]


@pytest.mark.parametrize(("model", "back"), [("deepseek/deepseek-reasoner", True), ("groq/openai/gpt-oss-120b", False)])
async def test_reasoning_goes_back_only_where_the_provider_takes_it(
    srv: ScriptedModelServer, model: str, back: bool
) -> None:
    steps = [ReasoningStep(pieces=["Look."]), ToolCallStep(name="grep", id="call_1"), FinishStep(), UsageStep()]
    messages = await turn_with_a_tool_call(srv, model, Reply(steps=steps))
    assert messages[2].get("reasoning_content") == ("Look." if back else None)  # type: ignore[union-attr]
