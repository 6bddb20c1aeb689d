"""One contract, two paths: every streaming scenario of the scripted server, direct and through litellm.

Each test plays the same replies through the direct path and through litellm, on the OpenAI-compatible
and the Anthropic wire, and `both()` asserts the two agree on the events, the final message, usage and
cost, the error (message, retryable, status), the number of requests and the request bodies; then the
test checks the outcome is the right one.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import replace

import anyio
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
from coder_agent.scripted.script import (
    CutStep,
    EndStep,
    FinishStep,
    HttpErrorStep,
    ReasoningStep,
    Reply,
    StreamErrorStep,
    TextStep,
    ToolCallStep,
    UsageStep,
    tool_call,
)
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.contract import ANTHROPIC, LM_STUDIO, OPENAI, PATHS, WIRES, Wire, both, run

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("wire", WIRES, ids=lambda w: w.name)]

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        },
    },
    {"type": "function", "function": {"name": "grep", "parameters": {"type": "object", "properties": {}}}},
]


async def test_text_streams_as_deltas_then_a_completion(wire: Wire) -> None:
    outcome = await both(wire, [Reply.text("Hel", "lo ", "world")])
    assert outcome.texts() == ["Hel", "lo ", "world"]
    _, message, finish, usage = outcome.completion
    assert (message["text"], finish) == ("Hello world", "stop")
    assert usage is not None and usage[:2] == (10, 3)
    assert outcome.requests == 1


async def test_reasoning_streams_as_thought_deltas(wire: Wire) -> None:
    outcome = await both(wire, [Reply.thinking_then_text(["Let me ", "think."], ["Done."])])
    assert outcome.texts(ReasoningDelta) == ["Let me ", "think."]
    _, message, _, _ = outcome.completion
    assert message["reasoning"] == "Let me think."
    if wire is ANTHROPIC:  # the signed block goes back verbatim on the next call
        assert message["thinking_blocks"] == [
            {"type": "thinking", "thinking": "Let me think.", "signature": "scripted-signature"}
        ]


async def test_reasoning_named_reasoning_streams_as_thought_deltas(wire: Wire) -> None:
    steps = [ReasoningStep(pieces=["Hm, ", "yes."], field="reasoning"), TextStep(pieces=["Yes."])]
    outcome = await both(wire, [Reply(steps=[*steps, FinishStep(), UsageStep()])])
    assert outcome.texts(ReasoningDelta) == ["Hm, ", "yes."]
    assert outcome.completion[1]["reasoning"] == "Hm, yes."


async def test_tool_calls_split_across_chunks_are_reassembled(wire: Wire) -> None:
    calls = [tool_call("read_file", {"path": "src/main.py"}, id="call_a", pieces=4), tool_call("grep", {}, id="call_b")]
    outcome = await both(wire, [Reply.tool_calls(calls, text=["Looking."])], tools=TOOLS)
    begins = [(e.index, e.id, e.name) for e in outcome.events if type(e).__name__ == "ToolCallBegin"]
    assert begins == [(0, "call_a", "read_file"), (1, "call_b", "grep")]
    _, message, finish, _ = outcome.completion
    assert finish == "tool_calls"
    assert [(c["id"], c["name"], json.loads(c["arguments"])) for c in message["tool_calls"]] == [
        ("call_a", "read_file", {"path": "src/main.py"}),
        ("call_b", "grep", {}),
    ]


async def test_usage_and_cost_match(wire: Wire) -> None:
    usage = UsageStep(prompt_tokens=1200, completion_tokens=34, cache_read_tokens=1000, cache_creation_tokens=100)
    reply = Reply(steps=[TextStep(pieces=["ok"]), FinishStep(), usage])
    outcome = await both(wire, [reply], model=wire.priced_model)
    _, _, _, (prompt, completion, cost) = outcome.completion
    assert (prompt, completion) == (1200, 34)
    if wire in (OPENAI, ANTHROPIC):  # litellm knows no price for a model on a local server
        assert cost is not None and cost > 0


async def test_a_length_stop_is_reported(wire: Wire) -> None:
    reply = Reply(steps=[TextStep(pieces=["cut"]), FinishStep(finish_reason="length"), UsageStep()])
    outcome = await both(wire, [reply])
    assert outcome.completion[2] == "length"


@pytest.mark.parametrize("status", [429, 500, 503, 529])
async def test_transient_http_errors_are_retried(wire: Wire, status: int) -> None:
    outcome = await both(wire, [Reply.error(status, "try later"), Reply.text("ok")])
    assert outcome.texts() == ["ok"]
    assert outcome.requests == 2


@pytest.mark.parametrize("status", [400, 401, 403, 404])
async def test_permanent_http_errors_are_not_retried(wire: Wire, status: int) -> None:
    outcome = await both(wire, [Reply.error(status, f"scripted {status}"), Reply.text("unused")])
    assert outcome.error is not None
    message, retryable, error_status = outcome.error
    assert f"scripted {status}" in message
    assert (retryable, error_status) == (False, status)
    assert outcome.requests == 1


async def test_an_error_that_echoes_the_key_says_what_it_said_without_the_key(wire: Wire) -> None:
    key = "live-" + secrets.token_hex(20)  # a self-hosted server's key: no `sk-` form anyone's redaction knows
    echo = Reply.error(401, "Incorrect API key provided: {key}", echo_key=True)
    outcome = await both(replace(wire, key=key), [echo, Reply.text("unused")])  # and the early call taken over
    assert outcome.headers[0].get("authorization", outcome.headers[0].get("x-api-key", "")).endswith(key)
    assert outcome.error is not None
    assert "Incorrect API key provided: [secret model key]" in outcome.error[0] and key not in outcome.error[0]


async def test_retries_are_bounded_and_say_so(wire: Wire) -> None:
    outcome = await both(wire, [Reply.error(503, "overloaded")] * 3)
    assert outcome.error is not None
    assert outcome.error[0].endswith("(gave up after 3 attempts)")
    assert outcome.error[1:] == (True, 503)
    assert outcome.requests == 3


async def test_a_context_window_error_says_so(wire: Wire) -> None:
    words = (
        "prompt is too long: 250000 tokens > 200000 maximum"
        if wire is ANTHROPIC
        else ("This model's maximum context length is 128000 tokens. However, your messages resulted in 250000 tokens.")
    )
    outcome = await both(wire, [Reply(steps=[HttpErrorStep(status=400, message=words)])])
    assert outcome.error is not None
    assert "no longer fits" in outcome.error[0]
    assert outcome.error[1] is False
    assert outcome.context_window is True  # what makes a turn compact and try again


async def test_a_stall_before_any_data_times_out_and_is_retried(wire: Wire) -> None:
    outcome = await both(wire, [Reply.stall(3), Reply.text("recovered")], timeout=0.5)
    assert outcome.texts() == ["recovered"]
    assert outcome.requests == 2


async def test_a_stall_after_text_fails_as_cut_off(wire: Wire) -> None:
    outcome = await both(wire, [Reply.stall(3, after_text=["Hel"]), Reply.text("unused")], timeout=0.5)
    assert outcome.texts() == ["Hel"]
    assert outcome.error == (
        "The model's reply was cut off: the model stopped sending data mid-reply (read timeout)",
        False,
        None,
    )


async def test_a_cut_after_text_fails_as_cut_off(wire: Wire) -> None:
    outcome = await both(wire, [Reply.cut_after("Hel", "lo"), Reply.text("unused")])
    assert outcome.texts() == ["Hel", "lo"]
    dropped = "The model's reply was cut off: the connection to the provider dropped mid-reply"
    assert outcome.error == (dropped, False, None)
    assert outcome.requests == 1


async def test_an_end_without_a_finish_reason_after_text_fails_as_cut_off(wire: Wire) -> None:
    outcome = await both(wire, [Reply.ended_after("Hel", "lo"), Reply.text("unused")])
    assert outcome.texts() == ["Hel", "lo"]
    assert outcome.error is not None and outcome.error[0].startswith("The model's reply was cut off")
    assert outcome.requests == 1


async def test_an_error_event_before_any_text_is_retried(wire: Wire) -> None:
    outcome = await both(wire, [Reply(steps=[StreamErrorStep(message="Overloaded")]), Reply.text("ok")])
    assert outcome.texts() == ["ok"]
    assert outcome.requests == 2


async def test_an_error_event_after_text_fails_as_cut_off_with_the_providers_words(wire: Wire) -> None:
    broken = Reply(steps=[TextStep(pieces=["Hel"]), StreamErrorStep(message="Overloaded")])
    outcome = await both(wire, [broken, Reply.text("unused")])
    assert outcome.texts() == ["Hel"]
    assert outcome.error == (
        "The model's reply was cut off: the model provider reported an error mid-reply: Overloaded",
        False,
        None,
    )


@pytest.mark.parametrize(
    "broken",
    [
        pytest.param(Reply(steps=[CutStep()]), id="cut-before-headers"),
        pytest.param(Reply(steps=[EndStep()]), id="ended-before-any-event"),
        pytest.param(Reply(steps=[ToolCallStep(name="grep", pieces=2), CutStep()]), id="cut-after-a-tool-call-began"),
        pytest.param(Reply(steps=[ReasoningStep(pieces=[]), EndStep()]), id="ended-in-an-empty-thought"),
    ],
)
async def test_a_stream_broken_before_any_text_is_retried(wire: Wire, broken: Reply) -> None:
    outcome = await both(wire, [broken, Reply.text("recovered")], tools=TOOLS)
    assert outcome.texts() == ["recovered"]
    assert outcome.requests == 2


@pytest.mark.parametrize("empty", [Reply(), Reply.empty_body()], ids=["empty-stream", "empty-200-body"])
async def test_an_empty_reply_is_retried_then_reported(wire: Wire, empty: Reply) -> None:
    outcome = await both(wire, [empty] * 3)
    assert outcome.error == (
        "The model provider sent an empty reply (no text, no tool call, no finish reason) (gave up after 3 attempts)",
        True,
        None,
    )
    assert outcome.requests == 3


async def test_a_retry_after_is_honoured(wire: Wire) -> None:
    start = anyio.current_time()
    outcome = await both(wire, [Reply.error(429, "slow down", retry_after=0.3), Reply.text("ok")])
    assert anyio.current_time() - start >= 0.6  # 0.3 s on each path
    assert outcome.texts() == ["ok"]


async def test_a_whole_conversation_is_sent_alike(wire: Wire) -> None:
    outcome = await both(wire, [Reply.text("ok")], messages=CONVERSATION, tools=TOOLS)
    assert outcome.requests == 1
    body = outcome.bodies[0]
    if wire is ANTHROPIC:
        assert body["system"] == [{"type": "text", "text": "You are a coding agent."}]
        assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user", "assistant", "user"]
    else:
        assert [m["role"] for m in body["messages"]][:3] == ["system", "user", "assistant"]


async def test_max_tokens_and_reasoning_effort_are_sent_as_litellm_sends_them(wire: Wire) -> None:
    effort = "high" if wire.effort_goes_direct else None  # else the call waits for litellm (test_fast_start)
    outcome = await both(wire, [Reply.text("ok")], max_tokens=321, reasoning_effort=effort)
    body = outcome.bodies[0]
    assert body["max_tokens"] == 321
    assert body.get("reasoning_effort") == (None if wire is LM_STUDIO else effort)


async def test_no_api_key_is_reported_alike_without_a_request(wire: Wire, monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(variable, raising=False)
    if wire.key_variable is not None:
        monkeypatch.delenv(wire.key_variable, raising=False)
    outcome = await both(wire, [Reply.text("local servers take any key")], api_key=None)
    if wire.key_variable is None:  # litellm sends a placeholder key: the call goes through
        assert outcome.texts() == ["local servers take any key"]
        assert outcome.headers[0]["authorization"] == "Bearer fake-api-key"
        return
    assert outcome.error == (
        f"No API key found for {wire.model}. Set CODER_AGENT_API_KEY or {wire.key_variable}; "
        "for a local server that checks no key, any value will do.",
        False,
        None,
    )
    assert outcome.requests == 0


async def test_an_unreachable_provider_is_named_alike(wire: Wire) -> None:
    with ScriptedModelServer() as srv:
        url = wire.api_base(srv)
    outcome = await both(wire, [], api_base=url, max_retries=1)
    assert outcome.error == (
        f"Could not reach the model provider at {url}: connection refused. Check CODER_AGENT_API_BASE "
        "(gave up after 2 attempts)",
        True,
        None,
    )


async def test_an_unreachable_provider_is_named_without_the_secrets_of_its_address(wire: Wire) -> None:
    with ScriptedModelServer() as srv:
        url = wire.api_base(srv)
    password, key = "pw-" + secrets.token_hex(2), "k-" + secrets.token_hex(3)  # short: known only in the URL
    address = url.replace("http://", f"http://me:{password}@") + f"?key={key}"
    shown = address.replace(password, "[secret CODER_AGENT_API_BASE]").replace(key, "[secret CODER_AGENT_API_BASE]")
    for path in PATHS:  # the causes they name differ (litellm's clients refuse a URL with credentials): not `both`
        outcome = await run(path, wire, [], api_base=address, max_retries=0)
        assert outcome.error is not None
        assert outcome.error[0].startswith(f"Could not reach the model provider at {shown}:"), outcome.error


CONVERSATION: list[ChatMessage] = [
    SystemMessage(text="You are a coding agent."),
    UserMessage(parts=[TextPart(text="Fix the bug in a.py")]),
    AssistantMessage(
        text="Let me look.",
        reasoning="Read it first.",
        thinking_blocks=[{"type": "thinking", "thinking": "Read it first.", "signature": "sig-1"}],
        tool_calls=[
            ToolCallRequest(id="call_1", name="read_file", arguments='{"path": "a.py"}'),
            ToolCallRequest(id="call_2", name="grep", arguments=""),
        ],
    ),
    ToolMessage(tool_call_id="call_1", content="def f():\n    return 1\n"),
    ToolMessage(tool_call_id="call_2", content=""),
    UserMessage(parts=[TextPart(text="Here is a screenshot"), ImagePart(data="iVBORw0KGgo=", mime_type="image/png")]),
    AssistantMessage(tool_calls=[ToolCallRequest(id="call_3", name="read_file", arguments='{"path": "b.py"}')]),
    ToolMessage(tool_call_id="call_3", content="x = 1"),
    UserMessage(parts=[TextPart(text="Thanks.  ")]),
]
