"""One contract, two clients of OpenAI's Responses API: the agent's own adapter (`ResponsesModel`) and litellm's
Responses bridge (`openai/responses/<model>`), as the oracle.

Each test plays the same replies from the scripted server (speaking the Responses API) through both and `both()`
asserts they agree on the events, the final message (reasoning items included), the usage (cached tokens
included) and its cost, the error (message, retryable, status), the number of requests and every request body.
Where the adapter differs on purpose in what it sends, `both()` takes the difference out first and the comment
there says why; where it differs in what it makes of a reply, test_responses_differences.py shows each case.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import anyio
import pytest

from coder_agent.llm.base import ReasoningDelta, ToolCallBegin
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
    ReasoningStep,
    Reply,
    Step,
    TextStep,
    ToolCallStep,
    UsageStep,
    tool_call,
)
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.responses_contract import HELLO, SESSION, Outcome, canonical, run

pytestmark = [
    pytest.mark.anyio,
    # litellm's bridge puts its cost into the usage it streams, which its own pydantic model then warns about.
    pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning"),
]

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
PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def _as_compared(body: dict[str, Any], adapter: bool) -> dict[str, Any]:
    """The body with the differences made on purpose taken out (each checked to be what it should be)."""
    body = copy.deepcopy(body)
    if adapter:
        # The adapter asks for the thinking's summary: without it a reasoning model streams no thought at all and
        # the user watches nothing while it thinks. litellm asks only with LITELLM_REASONING_AUTO_SUMMARY set.
        reasoning = body.get("reasoning") or {}
        if "include" in body:
            assert reasoning.pop("summary") == "auto"
        if not reasoning:
            body.pop("reasoning", None)
    for tool in body.get("tools") or ():
        if adapter:
            # The Responses API makes a function tool strict unless told otherwise, and strict mode refuses the
            # schema of any tool with an optional argument (most of ours): the adapter says `strict: false`.
            # litellm sends `strict: null` and `description: null` as they come.
            assert tool.pop("strict") is False
        else:
            for name in [name for name, value in tool.items() if value is None]:
                del tool[name]
            tool.pop("strict", None)
    return body


async def both(
    replies: list[Reply],
    messages: list[ChatMessage] = HELLO,
    tools: list[dict[str, Any]] | None = None,
    replay: list[ChatMessage] | None = None,
    **overrides: Any,
) -> Outcome:
    """Run through the adapter and through litellm, assert they agree in every respect, return the adapter's."""
    adapter = await run("adapter", replies, messages, tools or [], replay=replay, **overrides)
    oracle = await run("litellm", replies, messages, tools or [], replay=replay, **overrides)
    assert adapter.error == oracle.error
    assert adapter.context_window == oracle.context_window
    assert adapter.events == oracle.events
    assert adapter.requests == oracle.requests
    assert [canonical(_as_compared(b, True)) for b in adapter.bodies] == [
        canonical(_as_compared(b, False)) for b in oracle.bodies
    ]
    assert adapter.headers == oracle.headers
    return adapter


def _thinking_call(call_id: str = "call_read") -> Reply:
    usage = UsageStep(prompt_tokens=120, completion_tokens=30, reasoning_tokens=12)
    steps: list[Step] = [ReasoningStep(pieces=["I should "]), tool_call("read_file", {"path": "a.py"}, id=call_id)]
    return Reply(steps=[*steps, FinishStep(finish_reason="tool_calls"), usage])


async def test_text_streams_as_deltas_then_a_completion() -> None:
    outcome = await both([Reply.text("Hel", "lo ", "world")])
    assert outcome.texts() == ["Hel", "lo ", "world"]
    _, message, finish, usage = outcome.completion
    assert (message["text"], finish) == ("Hello world", "stop")
    assert usage is not None and usage[:3] == (10, 3, 0)
    body = outcome.bodies[0]
    assert body["input"] == [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}]
    assert (body["store"], body["stream"], body["include"]) == (False, True, ["reasoning.encrypted_content"])
    assert body["prompt_cache_key"] == SESSION


async def test_reasoning_streams_as_thought_deltas_and_its_item_is_kept_with_the_encrypted_content() -> None:
    outcome = await both([Reply.thinking_then_text(["Let me ", "think."], ["Done."])])
    assert outcome.texts(ReasoningDelta) == ["Let me ", "think."]
    _, message, _, _ = outcome.completion
    assert message["reasoning"] == "Let me think."
    [item] = message["reasoning_items"]
    assert item["type"] == "reasoning" and item["id"].startswith("rs_")
    assert item["encrypted_content"].startswith("enc_")
    assert item["summary"] == [{"type": "summary_text", "text": "Let me think."}]


async def test_tool_calls_split_across_deltas_are_reassembled() -> None:
    calls = [tool_call("read_file", {"path": "src/main.py"}, id="call_a", pieces=4), tool_call("grep", {}, id="call_b")]
    outcome = await both([Reply.tool_calls(calls, text=["Looking."])], tools=TOOLS)
    begins = [(e.index, e.id, e.name) for e in outcome.events if isinstance(e, ToolCallBegin)]
    assert begins == [(0, "call_a", "read_file"), (1, "call_b", "grep")]
    _, message, finish, _ = outcome.completion
    assert finish == "tool_calls"
    assert [(c["id"], c["name"], json.loads(c["arguments"])) for c in message["tool_calls"]] == [
        ("call_a", "read_file", {"path": "src/main.py"}),
        ("call_b", "grep", {}),
    ]
    assert [tool["name"] for tool in outcome.bodies[0]["tools"]] == ["read_file", "grep"]


async def test_reasoning_goes_back_with_the_next_turn_and_the_server_verifies_it() -> None:
    """Turn 1 thinks and calls a tool; turn 2 sends the reasoning item back, encrypted content and all, before the
    call it led to, and both clients send that history alike. The scripted server, as OpenAI, refuses reasoning it
    did not mint."""
    first = await both([_thinking_call()], tools=TOOLS)
    assert first.last is not None and first.last.message.reasoning_items is not None
    history: list[ChatMessage] = [*HELLO, first.last.message, ToolMessage(tool_call_id="call_read", content="hi")]
    # Against the server that minted it (the first request of each run is the same: so are its items).
    turn2 = await both([_thinking_call(), Reply.text("It prints hi.")], history, TOOLS, replay=HELLO)
    assert turn2.error is None and turn2.texts() == ["It prints hi."]
    sent = turn2.bodies[-1]["input"]
    assert [item["type"] for item in sent] == ["message", "reasoning", "function_call", "function_call_output"]
    [item] = first.last.message.reasoning_items
    assert sent[1] == {
        "type": "reasoning",
        "id": item["id"],
        "summary": item["summary"],
        "encrypted_content": item["encrypted_content"],
    }
    forged = first.last.message.model_copy(update={"reasoning_items": [{**item, "encrypted_content": "enc_forged"}]})
    refused = await both([Reply.text("unused")], [*HELLO, forged, history[2]], TOOLS)
    assert refused.error is not None and "could not be verified" in refused.error[0]
    assert refused.error[1:] == (False, 400)


async def test_a_whole_conversation_is_sent_alike() -> None:
    conversation: list[ChatMessage] = [
        SystemMessage(text="You are a coding agent."),
        UserMessage(parts=[TextPart(text="What is in this picture?"), ImagePart(data=PIXEL, mime_type="image/png")]),
        AssistantMessage(text="Let me look.", tool_calls=[ToolCallRequest(id="call_1", name="grep", arguments="{}")]),
        ToolMessage(tool_call_id="call_1", content="nothing"),
        AssistantMessage(text="A pixel."),
        UserMessage(parts=[TextPart(text="Thanks.")]),
    ]
    outcome = await both([Reply.text("ok")], conversation, TOOLS)
    body = outcome.bodies[0]
    assert body["instructions"] == "You are a coding agent."
    kinds = [(item["type"], item.get("role")) for item in body["input"]]
    assert kinds == [
        ("message", "user"),
        ("message", "assistant"),
        ("function_call", None),
        ("function_call_output", None),
        ("message", "assistant"),
        ("message", "user"),
    ]
    image = body["input"][0]["content"][1]
    assert image == {"type": "input_image", "image_url": f"data:image/png;base64,{PIXEL}", "detail": "auto"}


async def test_max_tokens_and_reasoning_effort_are_sent_as_litellm_sends_them() -> None:
    outcome = await both([Reply.text("ok")], max_tokens=321, reasoning_effort="high")
    body = outcome.bodies[0]
    assert body["max_output_tokens"] == 321
    assert body["reasoning"] == {"effort": "high", "summary": "auto"}
    tiny = await both([Reply.text("ok")], max_tokens=5)  # the API refuses fewer than 16
    assert tiny.bodies[0]["max_output_tokens"] == 16


@pytest.mark.parametrize(
    ("model", "usage"),
    [
        ("openai/gpt-5-mini", UsageStep(prompt_tokens=4000, completion_tokens=300, cache_read_tokens=3072)),
        ("openai/gpt-5", UsageStep(prompt_tokens=1200, completion_tokens=80, reasoning_tokens=64)),
        ("openai/o4-mini", UsageStep(prompt_tokens=2048, completion_tokens=10, cache_read_tokens=1024)),
        ("openai/gpt-5.4", UsageStep(prompt_tokens=300_000, completion_tokens=20, cache_read_tokens=50_000)),
    ],
    ids=["cached", "reasoning", "o-series", "past-a-price-tier"],
)
async def test_usage_and_cost_count_the_cached_tokens_at_their_own_price(model: str, usage: UsageStep) -> None:
    outcome = await both([Reply(steps=[TextStep(pieces=["ok"]), FinishStep(), usage])], model=model)
    _, _, _, (prompt, completion, cached, cost) = outcome.completion
    assert (prompt, completion, cached) == (usage.prompt_tokens, usage.completion_tokens, usage.cache_read_tokens)
    assert cost is not None and cost > 0


@pytest.mark.parametrize(("reason", "finish"), [("length", "length"), ("content_filter", "content_filter")])
async def test_an_incomplete_response_says_why(reason: Any, finish: str) -> None:
    outcome = await both([Reply(steps=[TextStep(pieces=["cut"]), FinishStep(finish_reason=reason), UsageStep()])])
    assert outcome.completion[2] == finish


@pytest.mark.parametrize("status", [429, 500, 503])
async def test_transient_http_errors_are_retried(status: int) -> None:
    outcome = await both([Reply.error(status, "try later"), Reply.text("ok")])
    assert outcome.texts() == ["ok"]
    assert outcome.requests == 2


@pytest.mark.parametrize("status", [400, 401, 403, 404])
async def test_permanent_http_errors_are_not_retried(status: int) -> None:
    outcome = await both([Reply.error(status, f"scripted {status}"), Reply.text("unused")])
    assert outcome.error is not None
    message, retryable, error_status = outcome.error
    assert f"scripted {status}" in message
    assert (retryable, error_status) == (False, status)
    assert outcome.requests == 1


async def test_retries_are_bounded_and_a_retry_after_is_honoured() -> None:
    outcome = await both([Reply.error(503, "overloaded")] * 3)
    assert outcome.error is not None and outcome.error[0].endswith("(gave up after 3 attempts)")
    start = anyio.current_time()
    waited = await both([Reply.error(429, "slow down", retry_after=0.3), Reply.text("ok")])
    assert anyio.current_time() - start >= 0.6  # 0.3 s on each path
    assert waited.texts() == ["ok"]


async def test_a_stall_before_any_data_times_out_and_is_retried() -> None:
    outcome = await both([Reply.stall(3), Reply.text("recovered")], timeout=0.5)
    assert outcome.texts() == ["recovered"]
    assert outcome.requests == 2


async def test_a_stall_after_text_fails_as_cut_off() -> None:
    outcome = await both([Reply.stall(3, after_text=["Hel"]), Reply.text("unused")], timeout=0.5)
    assert outcome.texts() == ["Hel"]
    assert outcome.error == (
        "The model's reply was cut off: the model stopped sending data mid-reply (read timeout)",
        False,
        None,
    )


async def test_a_cut_after_text_fails_as_cut_off() -> None:
    outcome = await both([Reply.cut_after("Hel", "lo"), Reply.text("unused")])
    assert outcome.texts() == ["Hel", "lo"]
    dropped = "The model's reply was cut off: the connection to the provider dropped mid-reply"
    assert outcome.error == (dropped, False, None)
    assert outcome.requests == 1


@pytest.mark.parametrize(
    "broken",
    [
        pytest.param(Reply(steps=[CutStep()]), id="cut-before-headers"),
        pytest.param(Reply(steps=[EndStep()]), id="ended-before-any-event"),
        pytest.param(Reply(steps=[ToolCallStep(name="grep", pieces=2), CutStep()]), id="cut-after-a-tool-call-began"),
    ],
)
async def test_a_stream_broken_before_any_text_is_retried(broken: Reply) -> None:
    outcome = await both([broken, Reply.text("recovered")], tools=TOOLS)
    assert outcome.texts() == ["recovered"]
    assert outcome.requests == 2


async def test_an_error_that_echoes_the_key_says_what_it_said_without_the_key() -> None:
    key = "live-0123456789abcdef0123"
    outcome = await both([Reply.error(401, "Incorrect API key provided: {key}", echo_key=True)], api_key=key)
    assert outcome.headers[0]["authorization"] == f"Bearer {key}"
    assert outcome.error is not None
    assert "Incorrect API key provided: [secret model key]" in outcome.error[0] and key not in outcome.error[0]


async def test_no_api_key_is_reported_without_a_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    adapter = await run("adapter", [Reply.text("unused")], api_key=None)
    assert adapter.error == (
        "No API key found for openai/gpt-5-mini. Set CODER_AGENT_API_KEY or OPENAI_API_KEY; "
        "for a local server that checks no key, any value will do.",
        False,
        None,
    )
    assert adapter.requests == 0
    # litellm sends the request with `Bearer None` and reports the provider's 401: the agent never sends one
    # without a key (the same rule as the other wires' direct paths).


async def test_an_unreachable_provider_is_named_alike() -> None:
    with ScriptedModelServer() as srv:
        url = srv.url
    outcome = await both([], api_base=url, max_retries=1)
    assert outcome.error == (
        f"Could not reach the model provider at {url}: connection refused. Check CODER_AGENT_API_BASE "
        "(gave up after 2 attempts)",
        True,
        None,
    )


async def test_a_thought_that_led_to_nothing_goes_back_with_an_empty_answer() -> None:
    """A reply cut off while thinking (`max_output_tokens`) leaves a reasoning item and no text: it goes back with an
    empty answer after it (OpenAI refuses a reasoning item without its following item), as litellm sends it."""
    thought_only = Reply(steps=[ReasoningStep(pieces=["Hmm"]), FinishStep(finish_reason="length"), UsageStep()])
    first = await both([thought_only])
    assert first.last is not None and first.last.finish_reason == "length"
    assert first.last.message.reasoning_items is not None and not first.last.message.text
    history: list[ChatMessage] = [*HELLO, first.last.message, UserMessage(parts=[TextPart(text="go on")])]
    history += [AssistantMessage(text=""), UserMessage(parts=[TextPart(text="?")])]  # a reply with nothing at all
    outcome = await both([thought_only, Reply.text("Going on.")], history, replay=HELLO)
    assert outcome.texts() == ["Going on."]
    kinds = [(item["type"], item.get("role")) for item in outcome.bodies[-1]["input"]]
    assert kinds == [
        ("message", "user"),
        ("reasoning", None),
        ("message", "assistant"),
        ("message", "user"),
        ("message", "assistant"),
        ("message", "user"),
    ]
