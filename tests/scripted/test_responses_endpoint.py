"""The scripted server's Responses API endpoint: OpenAI's events and error shapes, read by OpenAI's own SDK; the
input checked as OpenAI checks it (the encrypted reasoning it minted, tool calls and their outputs); the prompt
cache reported as OpenAI reports it."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import openai
import pytest

from coder_agent.scripted.responses_state import CACHE_MINIMUM, CACHE_STEP
from coder_agent.scripted.script import (
    FinishStep,
    ReasoningStep,
    Reply,
    StreamErrorStep,
    TextStep,
    UsageStep,
    tool_call,
)
from coder_agent.scripted.server import ScriptedModelServer

pytestmark = pytest.mark.anyio

USER = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}


async def events(srv: ScriptedModelServer, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Each event's name and payload; asserts the stream ends without `[DONE]` (the Responses API sends none)."""
    parsed: list[tuple[str, dict[str, Any]]] = []
    with anyio.fail_after(10):
        async with httpx.AsyncClient() as client, client.stream("POST", f"{srv.url}/responses", json=body) as r:
            assert r.status_code == 200 and r.headers["content-type"] == "text/event-stream"
            name = ""
            async for line in r.aiter_lines():
                assert line != "data: [DONE]"
                if line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: "):
                    parsed.append((name, json.loads(line[6:])))
    return parsed


async def post(srv: ScriptedModelServer, body: dict[str, Any]) -> httpx.Response:
    with anyio.fail_after(10):
        async with httpx.AsyncClient() as client:
            return await client.post(f"{srv.url}/responses", json=body)


def _thinking_and_call() -> Reply:
    usage = UsageStep(prompt_tokens=2000, completion_tokens=40, cache_read_tokens=1024, reasoning_tokens=25)
    steps = [ReasoningStep(pieces=["Look ", "first."]), TextStep(pieces=["Reading", " it."])]
    return Reply(steps=[*steps, tool_call("read_file", {"path": "a.py"}, pieces=2), FinishStep(), usage])


async def test_a_reply_streams_as_output_items_named_and_numbered(srv: ScriptedModelServer) -> None:
    srv.enqueue(_thinking_and_call())
    body = {"model": "gpt-5-mini", "input": [USER], "stream": True, "include": ["reasoning.encrypted_content"]}
    got = await events(srv, body)
    assert all(payload["type"] == name for name, payload in got)
    assert [payload["sequence_number"] for _, payload in got] == list(range(len(got)))
    names = [name for name, _ in got]
    assert names[:2] == ["response.created", "response.in_progress"]
    assert names[-1] == "response.completed"
    assert [p["delta"] for n, p in got if n == "response.reasoning_summary_text.delta"] == ["Look ", "first."]
    assert [p["delta"] for n, p in got if n == "response.output_text.delta"] == ["Reading", " it."]
    assert [p["delta"] for n, p in got if n == "response.function_call_arguments.delta"] == ['{"path":', ' "a.py"}']
    added = [p["item"]["type"] for n, p in got if n == "response.output_item.added"]
    assert added == ["reasoning", "message", "function_call"]
    done = {p["item"]["type"]: p["item"] for n, p in got if n == "response.output_item.done"}
    assert done["reasoning"]["encrypted_content"].startswith("enc_")
    assert done["function_call"]["arguments"] == '{"path": "a.py"}' and done["function_call"]["name"] == "read_file"
    completed = got[-1][1]["response"]
    assert completed["status"] == "completed"
    assert [item["type"] for item in completed["output"]] == ["reasoning", "message", "function_call"]
    assert completed["usage"] == {
        "input_tokens": 2000,
        "input_tokens_details": {"cached_tokens": 1024},
        "output_tokens": 40,
        "output_tokens_details": {"reasoning_tokens": 25},
        "total_tokens": 2040,
    }


async def test_openais_sdk_reads_the_stream_whole(srv: ScriptedModelServer) -> None:
    """The official client's stream helper checks each event against its types and builds the response from
    them: what it builds is what the script said."""
    srv.enqueue(_thinking_and_call())
    client = openai.AsyncOpenAI(base_url=srv.url, api_key="sk-test", max_retries=0)
    with anyio.fail_after(10):
        async with client.responses.stream(
            model="gpt-5-mini", input="hi", include=["reasoning.encrypted_content"], store=False
        ) as stream:
            kinds = [event.type async for event in stream]
            final = await stream.get_final_response()
    assert "response.reasoning_summary_text.delta" in kinds and kinds[-1] == "response.completed"
    assert final.output_text == "Reading it."
    reasoning, _message, call = final.output
    assert reasoning.type == "reasoning" and reasoning.encrypted_content is not None
    assert [part.text for part in reasoning.summary] == ["Look first."]
    assert call.type == "function_call" and (call.name, call.arguments) == ("read_file", '{"path": "a.py"}')
    assert final.usage is not None
    assert (final.usage.input_tokens_details.cached_tokens, final.usage.output_tokens_details.reasoning_tokens) == (
        1024,
        25,
    )
    await client.close()


async def test_errors_come_in_openais_shape_and_the_sdk_knows_them(srv: ScriptedModelServer) -> None:
    srv.enqueue(Reply.error(429, "slow down", retry_after=2))
    answer = await post(srv, {"model": "gpt-5", "input": "hi", "stream": True})
    assert answer.status_code == 429
    assert answer.json() == {"error": {"message": "slow down", "type": "rate_limit_error", "param": None, "code": None}}
    assert answer.headers["retry-after"] == "2"
    srv.enqueue(Reply.error(401, "bad key"))
    client = openai.AsyncOpenAI(base_url=srv.url, api_key="sk-test", max_retries=0)
    with anyio.fail_after(10), pytest.raises(openai.AuthenticationError):
        await client.responses.create(model="gpt-5", input="hi", stream=True)
    await client.close()


async def test_an_incomplete_and_a_failed_response_end_the_stream_as_openai_ends_them(
    srv: ScriptedModelServer,
) -> None:
    srv.enqueue(Reply(steps=[TextStep(pieces=["cu"]), FinishStep(finish_reason="length"), UsageStep()]))
    got = await events(srv, {"model": "gpt-5", "input": "hi", "stream": True})
    name, payload = got[-1]
    assert name == "response.incomplete"
    assert payload["response"]["incomplete_details"] == {"reason": "max_output_tokens"}
    srv.enqueue(Reply(steps=[TextStep(pieces=["Hel"]), StreamErrorStep(message="boom", error_type="server_error")]))
    got = await events(srv, {"model": "gpt-5", "input": "hi", "stream": True})
    name, payload = got[-1]
    assert name == "response.failed"
    assert payload["response"]["status"] == "failed"
    assert payload["response"]["error"] == {"code": "server_error", "message": "boom"}


async def test_a_request_without_stream_gets_one_whole_response(srv: ScriptedModelServer) -> None:
    srv.enqueue(Reply.thinking_then_text(["hm"], ["Hi", "!"]))
    answer = await post(srv, {"model": "o4-mini", "input": "hi"})
    whole = answer.json()
    assert (whole["object"], whole["status"], whole["model"]) == ("response", "completed", "o4-mini")
    assert [item["type"] for item in whole["output"]] == ["reasoning", "message"]
    assert whole["output"][1]["content"][0]["text"] == "Hi!"
    assert "encrypted_content" not in whole["output"][0]  # not asked for


async def _turn_one(srv: ScriptedModelServer, store: bool | None, encrypted: bool) -> dict[str, Any]:
    """One reply with a reasoning item; the item, as OpenAI sent it."""
    srv.enqueue(Reply.thinking_then_text(["hm"], ["ok"]))
    body: dict[str, Any] = {"model": "gpt-5", "input": [USER], "stream": True}
    if store is not None:
        body["store"] = store
    if encrypted:
        body["include"] = ["reasoning.encrypted_content"]
    got = await events(srv, body)
    return next(p["item"] for n, p in got if n == "response.output_item.done" and p["item"]["type"] == "reasoning")


def _second(item: dict[str, Any], store: bool | None = False) -> dict[str, Any]:
    answer = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}
    body: dict[str, Any] = {"model": "gpt-5", "input": [USER, item, answer, USER], "stream": True}
    if store is not None:
        body["store"] = store
    return body


async def test_reasoning_sent_back_must_be_what_the_server_minted(srv: ScriptedModelServer) -> None:
    item = await _turn_one(srv, store=False, encrypted=True)
    srv.enqueue(Reply.text("fine"), Reply.text("unused"))
    assert (await post(srv, _second(item))).status_code == 200
    forged = await post(srv, _second({**item, "encrypted_content": "enc_forged"}))
    assert forged.status_code == 400
    assert forged.json()["error"]["code"] == "invalid_encrypted_content"
    assert srv.pending == 1  # a refused request takes no reply


async def test_reasoning_named_by_id_alone_is_found_only_when_the_response_was_stored(
    srv: ScriptedModelServer,
) -> None:
    item = await _turn_one(srv, store=False, encrypted=False)
    assert "encrypted_content" not in item
    lost = await post(srv, _second(item))
    assert lost.status_code == 404
    assert "Items are not persisted when `store` is set to false" in lost.json()["error"]["message"]
    stored = await _turn_one(srv, store=None, encrypted=False)  # `store` defaults to true, as OpenAI's does
    srv.enqueue(Reply.text("fine"))
    assert (await post(srv, _second(stored, store=None))).status_code == 200


async def test_a_tool_output_needs_its_call_and_a_call_its_output(srv: ScriptedModelServer) -> None:
    call = {"type": "function_call", "call_id": "call_x", "name": "grep", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "call_x", "output": "none"}
    srv.enqueue(Reply.text("fine"))
    orphan = await post(srv, {"model": "gpt-5", "input": [USER, output], "stream": True})
    assert orphan.status_code == 400
    assert orphan.json()["error"]["message"] == "No tool call found for function call output with call_id call_x."
    unanswered = await post(srv, {"model": "gpt-5", "input": [USER, call], "stream": True})
    assert unanswered.status_code == 400
    assert unanswered.json()["error"]["message"] == "No tool output found for function call call_x."
    assert (await post(srv, {"model": "gpt-5", "input": [USER, call, output], "stream": True})).status_code == 200


async def test_the_prompt_cache_matches_the_prefix_of_earlier_prompts() -> None:
    """From 1024 tokens on, in steps of 128, over the tools, instructions and input as sent: a request that
    repeats an earlier one's start is billed as cached for it; reordering the tools loses the match."""
    tools = [{"type": "function", "name": name, "parameters": {}, "strict": False} for name in ("grep", "read")]
    instructions = "You are a coding agent. " * 400  # ~9600 characters: ~2400 tokens
    first = {"model": "gpt-5", "instructions": instructions, "tools": tools, "input": [USER], "stream": True}
    answer = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}
    second = {**first, "input": [USER, answer, USER]}
    shuffled = {**second, "tools": tools[::-1]}
    with ScriptedModelServer(count_prompt_tokens=True) as srv:
        srv.enqueue(Reply.text("ok"), Reply.text("ok"), Reply.text("ok"))
        usages = [(await events(srv, body))[-1][1]["response"]["usage"] for body in (first, second, shuffled)]
        cached = [usage["input_tokens_details"]["cached_tokens"] for usage in usages]
        assert srv.responses.cached == cached
    assert cached[0] == 0 and cached[2] == 0
    assert cached[1] >= CACHE_MINIMUM and (cached[1] - CACHE_MINIMUM) % CACHE_STEP == 0
    assert usages[1]["input_tokens"] - CACHE_STEP < cached[1] <= usages[1]["input_tokens"]


async def test_a_request_over_the_context_limit_gets_openais_error_and_takes_no_reply() -> None:
    with ScriptedModelServer([Reply.text("unused")], context_limit=10) as srv:
        answer = await post(srv, {"model": "gpt-5", "input": "x" * 400, "stream": True})
        assert srv.pending == 1 and len(srv.requests) == 1
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert (error["code"], error["param"]) == ("context_length_exceeded", "input")
    assert error["message"].startswith("Your input exceeds the context window of this model.")


async def test_reasoning_sent_back_needs_what_it_led_to(srv: ScriptedModelServer) -> None:
    item = await _turn_one(srv, store=False, encrypted=True)
    alone = await post(srv, {"model": "gpt-5", "input": [USER, item, USER], "stream": True, "store": False})
    assert alone.status_code == 400
    assert alone.json()["error"]["message"].endswith("was provided without its required following item.")
