"""Anthropic thinking through the agent's own adapter: budgets and adaptive thinking as litellm asks for them, signed
thinking blocks kept across the calls of a turn as the API requires, and where the adapter differs on purpose."""

from __future__ import annotations

from contextlib import aclosing

import anyio
import pytest

from coder_agent.llm.base import Completion
from coder_agent.llm.direct_model import DirectModel
from coder_agent.llm.messages import AssistantMessage, ChatMessage, SystemMessage, TextPart, ToolMessage, UserMessage
from coder_agent.llm.wire.routes import route_for
from coder_agent.scripted.script import FinishStep, ReasoningStep, Reply, ToolCallStep
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.contract import ANTHROPIC, PATHS, both, config_for, run

pytestmark = pytest.mark.anyio

TOOLS = [{"type": "function", "function": {"name": "grep", "parameters": {"type": "object", "properties": {}}}}]
HELLO: list[ChatMessage] = [SystemMessage(text="You code."), UserMessage(parts=[TextPart(text="hi")])]


@pytest.mark.parametrize(("effort", "budget"), [("low", 1024), ("medium", 2048), ("high", 4096)])
async def test_a_thinking_budget_is_litellms_with_the_models_whole_output_limit(effort: str, budget: int) -> None:
    replies = [Reply.thinking_then_text(["Hm."], ["ok"])]
    ours, theirs = [await run(path, ANTHROPIC, replies, reasoning_effort=effort) for path in PATHS]
    assert ours.events == theirs.events
    assert ours.bodies[0]["thinking"] == theirs.bodies[0]["thinking"] == {"type": "enabled", "budget_tokens": budget}
    # Where the adapter differs on purpose: litellm asks for the budget plus 4,096 tokens, so a thinking model could
    # not write a file longer than that in one tool call; the adapter asks for the model's output limit, as it does
    # without thinking.
    assert theirs.bodies[0]["max_tokens"] == budget + 4096
    assert ours.bodies[0]["max_tokens"] == 64000


async def test_a_model_that_thinks_adaptively_gets_adaptive_thinking_and_an_effort() -> None:
    reply = Reply.thinking_then_text(["Hm."], ["ok"])
    outcome = await both(ANTHROPIC, [reply], model="anthropic/claude-opus-4-6", reasoning_effort="medium")
    body = outcome.bodies[0]
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert body["output_config"] == {"effort": "medium"}


async def stream(model: DirectModel, messages: list[ChatMessage]) -> Completion:
    with anyio.fail_after(30):
        async with aclosing(model.stream(messages, TOOLS)) as events:
            completions = [event async for event in events if isinstance(event, Completion)]
    return completions[-1]


def adapter(srv: ScriptedModelServer, **overrides: object) -> DirectModel:
    config = config_for(ANTHROPIC, srv, **overrides)
    route = route_for(config, {})
    assert route is not None
    return DirectModel(config, route)


async def test_max_tokens_below_the_budget_are_raised_above_it(srv: ScriptedModelServer) -> None:
    # litellm sends max_tokens=321 with a 4,096-token budget, which Anthropic refuses ("max_tokens must be greater
    # than thinking.budget_tokens"): the adapter leaves room for the answer after the thinking.
    srv.enqueue(Reply.text("ok"))
    await stream(adapter(srv, max_tokens=321, reasoning_effort="high"), HELLO)
    assert srv.requests[0].body["max_tokens"] == 4096 + 321


async def test_signed_thinking_goes_back_with_the_tool_call_it_led_to(srv: ScriptedModelServer) -> None:
    thinking = ReasoningStep(pieces=["Search ", "first."], signature="sig-A")
    srv.enqueue(
        Reply(steps=[thinking, ToolCallStep(name="grep", id="toolu_1"), FinishStep(finish_reason="tool_calls")]),
        Reply.text("Found it."),
    )
    model = adapter(srv, reasoning_effort="low")
    first = await stream(model, HELLO)
    assert first.message.thinking_blocks == [{"type": "thinking", "thinking": "Search first.", "signature": "sig-A"}]
    history = [*HELLO, first.message, ToolMessage(tool_call_id="toolu_1", content="a.py:1")]
    await stream(model, history)
    turn = srv.requests[1].body["messages"][1]
    assert turn["role"] == "assistant"
    assert turn["content"][0] == {"type": "thinking", "thinking": "Search first.", "signature": "sig-A"}
    assert turn["content"][1]["type"] == "tool_use"
    assert srv.requests[1].body["thinking"] == {"type": "enabled", "budget_tokens": 1024}


async def test_thinking_turned_on_in_the_middle_of_a_tool_loop_waits_for_the_next_turn(
    srv: ScriptedModelServer,
) -> None:
    # The API refuses thinking when the assistant turn being continued began without a thinking block.
    srv.enqueue(Reply.text("done"), Reply.text("again"))
    call = AssistantMessage(tool_calls=[{"id": "toolu_1", "name": "grep", "arguments": "{}"}])  # type: ignore[list-item]
    history = [*HELLO, call, ToolMessage(tool_call_id="toolu_1", content="a.py:1")]
    model = adapter(srv, reasoning_effort="high")
    await stream(model, history)
    assert "thinking" not in srv.requests[0].body
    await stream(model, [*history, AssistantMessage(text="done"), UserMessage(parts=[TextPart(text="more")])])
    assert srv.requests[1].body["thinking"] == {"type": "enabled", "budget_tokens": 4096}
