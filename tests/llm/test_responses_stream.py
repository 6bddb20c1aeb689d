"""Reading a Responses API stream: the events the scripted server does not send, as OpenAI documents them."""

from __future__ import annotations

import json
from typing import Any

import pytest

from coder_agent.llm.base import ReasoningDelta, TextDelta, ToolCallBegin
from coder_agent.llm.errors import StreamEndedEarly, classify_error
from coder_agent.llm.responses_stream import ResponseFailed, ResponsesReader


def feed(reader: ResponsesReader, *events: dict[str, Any]) -> list[Any]:
    return [event for payload in events for event in reader.add(json.dumps(payload))]


def test_an_error_event_raises_openais_words_and_code() -> None:
    reader = ResponsesReader()
    with pytest.raises(ResponseFailed) as caught:
        feed(reader, {"type": "error", "code": "rate_limit_exceeded", "message": "Slow down.", "sequence_number": 3})
    assert (caught.value.message, caught.value.code) == ("Slow down.", "rate_limit_exceeded")
    assert classify_error(caught.value, "openai/gpt-5").retryable


def test_a_refusal_is_shown_as_text() -> None:
    reader = ResponsesReader()
    events = feed(
        reader,
        {"type": "response.refusal.delta", "item_id": "msg_1", "output_index": 0, "delta": "I can't help."},
        {"type": "response.completed", "response": {"usage": {"input_tokens": 5, "output_tokens": 3}}},
    )
    assert events == [TextDelta("I can't help.")]
    message, finish = reader.finish()
    assert (message.text, finish) == ("I can't help.", "stop")


def test_summary_parts_of_one_item_are_paragraphs_and_unknown_events_are_skipped() -> None:
    reader = ResponsesReader()
    part = {"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "output_index": 0}
    events = feed(
        reader,
        {**part, "summary_index": 0, "delta": "**Plan**"},
        {"type": "response.some_new_event", "whatever": True},
        {**part, "summary_index": 1, "delta": "**Check**"},
    )
    assert events == [ReasoningDelta("**Plan**"), ReasoningDelta("\n\n"), ReasoningDelta("**Check**")]


def test_a_call_whose_arguments_come_whole_with_its_done_is_taken_whole() -> None:
    reader = ResponsesReader()
    item = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "grep", "arguments": ""}
    events = feed(
        reader,
        {"type": "response.output_item.added", "output_index": 1, "item": item},
        {"type": "response.output_item.done", "output_index": 1, "item": {**item, "arguments": '{"q": "x"}'}},
        {"type": "response.completed", "response": {"output": [], "usage": None}},
    )
    assert events == [ToolCallBegin(0, "call_1", "grep")]
    message, finish = reader.finish()
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [("call_1", "grep", '{"q": "x"}')]
    assert finish == "tool_calls"


def test_a_stream_that_ends_before_its_terminal_event_is_cut_off() -> None:
    reader = ResponsesReader()
    feed(reader, {"type": "response.output_text.delta", "delta": "Hel"})
    with pytest.raises(StreamEndedEarly) as caught:
        reader.finish()
    assert caught.value.received
