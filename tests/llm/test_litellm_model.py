"""`LiteLLMModel` against the scripted OpenAI-compatible server, through litellm for real."""

from __future__ import annotations

import json
from contextlib import aclosing

import anyio
import pytest

from coder_agent.llm.base import Completion, ModelError, ReasoningDelta, TextDelta, ToolCallBegin
from coder_agent.llm.litellm_model import LiteLLMModel, ModelConfig
from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.litellm_model import MESSAGES, collect, model_for


@pytest.mark.anyio
async def test_text_and_reasoning_stream_as_deltas_then_a_completion(srv: ScriptedModelServer) -> None:
    srv.enqueue(Reply.thinking_then_text(["Let me ", "think."], ["Hel", "lo"]))
    events = await collect(model_for(srv))
    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == ["Let me ", "think."]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hel", "lo"]
    completion = events[-1]
    assert isinstance(completion, Completion)
    assert completion.message.text == "Hello"
    assert completion.message.reasoning == "Let me think."
    assert completion.finish_reason == "stop"
    assert completion.usage is not None and completion.usage.completion_tokens == 4


@pytest.mark.anyio
async def test_split_tool_calls_are_announced_once_and_reassembled(srv: ScriptedModelServer) -> None:
    srv.enqueue(
        Reply.tool_calls(
            [tool_call("read_file", {"path": "a.py"}, id="c1"), tool_call("grep", {"pattern": "TODO"}, id="c2")],
            text=["Looking."],
        )
    )
    tools = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]
    events = await collect(model_for(srv), tools)
    assert [(e.id, e.name) for e in events if isinstance(e, ToolCallBegin)] == [("c1", "read_file"), ("c2", "grep")]
    completion = events[-1]
    assert isinstance(completion, Completion)
    assert completion.finish_reason == "tool_calls"
    calls = [(c.id, c.name, json.loads(c.arguments)) for c in completion.message.tool_calls]
    assert calls == [("c1", "read_file", {"path": "a.py"}), ("c2", "grep", {"pattern": "TODO"})]
    assert srv.requests[0].body["tools"] == tools


@pytest.mark.anyio
async def test_length_finish_reason_is_reported(srv: ScriptedModelServer) -> None:
    reply = Reply.text("cut")
    reply.steps[1] = reply.steps[1].model_copy(update={"finish_reason": "length"})
    srv.enqueue(reply)
    completion = (await collect(model_for(srv)))[-1]
    assert isinstance(completion, Completion) and completion.finish_reason == "length"


@pytest.mark.anyio
@pytest.mark.parametrize("status", [429, 500, 503])
async def test_transient_errors_are_retried_then_succeed(srv: ScriptedModelServer, status: int) -> None:
    srv.enqueue(Reply.error(status, "try later"), Reply.text("ok"))
    events = await collect(model_for(srv))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["ok"]
    assert len(srv.requests) == 2


@pytest.mark.anyio
async def test_retries_are_bounded_and_the_error_says_so(srv: ScriptedModelServer) -> None:
    srv.enqueue(*[Reply.error(503, "overloaded")] * 3)
    with pytest.raises(ModelError) as info:
        await collect(model_for(srv, max_retries=2))
    assert info.value.retryable
    assert "gave up after 3 attempts" in info.value.message
    assert len(srv.requests) == 3


@pytest.mark.anyio
async def test_retry_after_is_honoured(srv: ScriptedModelServer) -> None:
    srv.enqueue(Reply.error(429, "slow down", retry_after=0.5), Reply.text("ok"))
    start = anyio.current_time()
    await collect(model_for(srv))
    assert anyio.current_time() - start >= 0.5


@pytest.mark.anyio
async def test_auth_failure_is_not_retried_and_names_the_setting(srv: ScriptedModelServer) -> None:
    srv.enqueue(Reply.error(401, "invalid api key"))
    with pytest.raises(ModelError) as info:
        await collect(model_for(srv))
    assert not info.value.retryable
    assert info.value.status == 401
    assert "CODER_AGENT_API_KEY" in info.value.message
    assert len(srv.requests) == 1


@pytest.mark.anyio
async def test_a_stall_before_any_data_times_out_and_is_retried(srv: ScriptedModelServer) -> None:
    srv.enqueue(Reply.stall(3), Reply.text("recovered"))
    events = await collect(model_for(srv, timeout=0.5))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["recovered"]


@pytest.mark.anyio
async def test_a_stream_cut_after_text_was_shown_fails_without_a_retry(srv: ScriptedModelServer) -> None:
    srv.enqueue(Reply.cut_after("Hello", " wor"), Reply.text("should not be used"))
    shown: list[str] = []
    with pytest.raises(ModelError) as info, anyio.fail_after(30):
        async with aclosing(model_for(srv).stream(MESSAGES)) as events:
            async for event in events:
                if isinstance(event, TextDelta):
                    shown.append(event.text)
    assert shown == ["Hello", " wor"]
    assert info.value.message.startswith("The model's reply was cut off")
    assert len(srv.requests) == 1


@pytest.mark.anyio
async def test_connection_refused_is_a_clear_error() -> None:
    with ScriptedModelServer() as srv:
        url = srv.url
    config = ModelConfig(model="openai/scripted", api_base=url, api_key="sk", max_retries=1, retry_base_delay=0.01)
    with pytest.raises(ModelError) as info, anyio.fail_after(30):
        async with aclosing(LiteLLMModel(config).stream(MESSAGES)) as events:
            async for _ in events:
                pass
    assert "reach" in info.value.message or "failed" in info.value.message


@pytest.mark.anyio
async def test_cancelling_the_consumer_closes_the_http_stream(srv: ScriptedModelServer) -> None:
    srv.enqueue(Reply.stall(30, after_text=["first"]))
    got_first = anyio.Event()

    async def consume() -> None:
        async with aclosing(model_for(srv, timeout=60).stream(MESSAGES)) as events:
            async for event in events:
                if isinstance(event, TextDelta):
                    got_first.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(consume)
        with anyio.fail_after(30):
            await got_first.wait()
        tg.cancel_scope.cancel()
    assert await anyio.to_thread.run_sync(srv.wait_disconnect, 5.0)
