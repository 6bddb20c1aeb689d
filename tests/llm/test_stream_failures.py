"""Streams that end wrong, and failures a user must act on: through litellm and the scripted server, for real."""

from __future__ import annotations

import logging
from contextlib import aclosing

import anyio
import pytest

from coder_agent.llm.base import Completion, ModelError, TextDelta, ToolCallBegin
from coder_agent.llm.litellm_model import LiteLLMModel, ModelConfig
from coder_agent.scripted.script import CutStep, EndStep, Reply, ToolCallStep
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.litellm_model import MESSAGES, collect, model_for

pytestmark = pytest.mark.anyio


async def shown_then_error(model: LiteLLMModel) -> tuple[list[str], ModelError]:
    shown: list[str] = []
    with pytest.raises(ModelError) as info, anyio.fail_after(30):
        async with aclosing(model.stream(MESSAGES)) as events:
            async for event in events:
                if isinstance(event, TextDelta):
                    shown.append(event.text)
    return shown, info.value


async def test_a_stream_that_breaks_after_a_tool_call_began_is_retried(srv: ScriptedModelServer) -> None:
    started = ToolCallStep(name="read_file", arguments='{"path": "a.py"}', id="c1", pieces=3)
    srv.enqueue(Reply(steps=[started, CutStep()]), Reply.text("ok"))
    events = await collect(model_for(srv))
    assert [(e.id, e.name) for e in events if isinstance(e, ToolCallBegin)] == [("c1", "read_file")]
    completion = events[-1]
    assert isinstance(completion, Completion)
    assert (completion.message.text, completion.message.tool_calls) == ("ok", [])
    assert len(srv.requests) == 2


async def test_a_stream_that_ends_without_a_finish_reason_after_text_says_it_was_cut_off(
    srv: ScriptedModelServer,
) -> None:
    srv.enqueue(Reply.ended_after("Hel", "lo"), Reply.text("should not be used"))
    shown, error = await shown_then_error(model_for(srv))
    assert shown == ["Hel", "lo"]
    assert error.message.startswith("The model's reply was cut off")
    assert (error.retryable, error.status) == (False, None)
    assert len(srv.requests) == 1


@pytest.mark.parametrize(
    "broken",
    [
        pytest.param(Reply(steps=[CutStep()]), id="cut-before-headers"),
        pytest.param(Reply(steps=[EndStep()]), id="ended-before-any-chunk"),
        pytest.param(Reply(steps=[ToolCallStep(name="grep", pieces=2), EndStep()]), id="ended-after-a-tool-call-began"),
    ],
)
async def test_a_stream_that_ends_before_any_text_is_retried(srv: ScriptedModelServer, broken: Reply) -> None:
    srv.enqueue(broken, Reply.text("recovered"))
    events = await collect(model_for(srv))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["recovered"]
    assert len(srv.requests) == 2


@pytest.mark.parametrize("empty", [Reply(), Reply.empty_body()], ids=["empty-stream", "empty-200-body"])
async def test_an_empty_reply_is_retried_then_reported(srv: ScriptedModelServer, empty: Reply) -> None:
    srv.enqueue(*[empty] * 3)
    with pytest.raises(ModelError) as info:
        await collect(model_for(srv, max_retries=2))
    assert info.value.message == (
        "The model provider sent an empty reply (no text, no tool call, no finish reason) (gave up after 3 attempts)"
    )
    assert (info.value.retryable, info.value.status) == (True, None)
    assert len(srv.requests) == 3


async def test_no_api_key_for_a_custom_api_base_is_not_retried_and_says_what_to_set(
    srv: ScriptedModelServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = ModelConfig(model="openai/local", api_base=srv.url, max_retries=2, retry_base_delay=0.01)
    with caplog.at_level(logging.WARNING), pytest.raises(ModelError) as info:
        await collect(LiteLLMModel(config))
    assert info.value.message == (
        "No API key found for openai/local. Set CODER_AGENT_API_KEY or OPENAI_API_KEY; "
        "for a local server that checks no key, any value will do."
    )
    assert (info.value.retryable, info.value.status) == (False, None)
    assert srv.requests == []
    assert not [r for r in caplog.records if "retry" in r.getMessage()]


async def test_a_model_name_without_a_provider_prefix_says_to_add_one(srv: ScriptedModelServer) -> None:
    config = ModelConfig(model="gpt-oss-foo", api_base=srv.url, api_key="sk", max_retries=2, retry_base_delay=0.01)
    with pytest.raises(ModelError) as info:
        await collect(LiteLLMModel(config))
    assert "CODER_AGENT_MODEL needs a provider prefix" in info.value.message
    assert "openai/gpt-oss-foo" in info.value.message
    assert (info.value.retryable, info.value.status) == (False, None)
    assert srv.requests == []


async def test_an_unreachable_api_base_is_named_with_the_reason() -> None:
    with ScriptedModelServer() as srv:
        url = srv.url
    config = ModelConfig(model="openai/scripted", api_base=url, api_key="sk", max_retries=1, retry_base_delay=0.01)
    with pytest.raises(ModelError) as info:
        await collect(LiteLLMModel(config))
    assert info.value.message == (
        f"Could not reach the model provider at {url}: connection refused. Check CODER_AGENT_API_BASE "
        "(gave up after 2 attempts)"
    )
    assert (info.value.retryable, info.value.status) == (True, None)
