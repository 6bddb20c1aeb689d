"""The providers that offer OpenAI Chat Completions, each through the agent's adapter and through litellm: the same
events, message, usage, errors and requests, bar the differences each provider's case names (and says why).

Gemini and Ollama are left out: litellm speaks their native APIs, which the agent does not (it speaks their
OpenAI-compatible endpoints), so there is no oracle to compare with; `test_routes.py` checks where they go.
"""

from __future__ import annotations

import json

import pytest

from coder_agent.llm.base import ReasoningDelta
from coder_agent.llm.messages import (
    AssistantMessage,
    ChatMessage,
    ImagePart,
    SystemMessage,
    TextPart,
    ToolCallRequest,
    ToolMessage,
    UserMessage,
)
from coder_agent.scripted.script import FinishStep, ReasoningStep, Reply, TextStep, UsageStep, tool_call
from tests.support.contract import PROVIDERS, Wire, both

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("wire", PROVIDERS, ids=lambda w: w.name)]

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        },
    }
]

CONVERSATION: list[ChatMessage] = [
    SystemMessage(text="You are a coding agent."),
    UserMessage(parts=[TextPart(text="Fix the bug in a.py")]),
    AssistantMessage(
        text="Let me look.",
        reasoning="Read it first.",
        tool_calls=[ToolCallRequest(id="call_1", name="read_file", arguments='{"path": "a.py"}')],
    ),
    ToolMessage(tool_call_id="call_1", content="def f():\n    return 1\n"),
    UserMessage(parts=[TextPart(text="And this"), ImagePart(data="iVBORw0KGgo=", mime_type="image/png")]),
]


async def test_text_and_usage(wire: Wire) -> None:
    usage = UsageStep(prompt_tokens=1200, completion_tokens=34, cache_read_tokens=1000)
    outcome = await both(wire, [Reply(steps=[TextStep(pieces=["Hel", "lo"]), FinishStep(), usage])])
    assert outcome.texts() == ["Hel", "lo"]
    _, message, finish, usage = outcome.completion
    assert (message["text"], finish) == ("Hello", "stop")
    if wire.name in ("mistral", "cerebras"):  # not asked for (`stream_options`): the scripted server sends none
        assert usage is None
        return
    prompt, completion, _cost, read, written = usage
    assert (prompt, completion, read, written) == (1200, 34, 1000, 0)


async def test_reasoning_streams_as_thoughts(wire: Wire) -> None:
    steps = [ReasoningStep(pieces=["Hm, ", "yes."], field=wire.reasoning_field), TextStep(pieces=["Yes."])]
    outcome = await both(wire, [Reply(steps=[*steps, FinishStep(), UsageStep()])])
    assert outcome.texts(ReasoningDelta) == ["Hm, ", "yes."]


async def test_tool_calls(wire: Wire) -> None:
    call = tool_call("read_file", {"path": "src/main.py"}, id="call_a", pieces=3)
    outcome = await both(wire, [Reply.tool_calls([call])], tools=TOOLS)
    _, message, finish, _ = outcome.completion
    assert finish == "tool_calls"
    calls = [(c["id"], json.loads(c["arguments"])) for c in message["tool_calls"]]
    assert calls == [("call_a", {"path": "src/main.py"})]


@pytest.mark.parametrize(("status", "retried"), [(429, True), (503, True), (400, False), (401, False)])
async def test_http_errors(wire: Wire, status: int, retried: bool) -> None:
    outcome = await both(wire, [Reply.error(status, f"scripted {status}"), Reply.text("ok")])
    assert outcome.requests == (2 if retried else 1)


async def test_a_whole_conversation(wire: Wire) -> None:
    outcome = await both(wire, [Reply.text("ok")], messages=CONVERSATION, tools=TOOLS, max_tokens=321)
    body = outcome.bodies[0]
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "tool", "user"]
    assert ("reasoning_content" in body["messages"][2]) is wire.reasoning_back
