"""The scripted server's Anthropic Messages endpoint: Anthropic's SSE events and error shape, recorded requests."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import anyio
import httpx
import pytest

from coder_agent.scripted.script import FinishStep, ReasoningStep, Reply, TextStep, UsageStep, tool_call
from coder_agent.scripted.server import ScriptedModelServer

pytestmark = pytest.mark.anyio


async def events(srv: ScriptedModelServer, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    parsed: list[tuple[str, dict[str, Any]]] = []
    async with httpx.AsyncClient() as client, client.stream("POST", f"{srv.anthropic_url}/v1/messages", json=body) as r:
        assert r.headers["content-type"] == "text/event-stream"
        name = ""
        async for line in r.aiter_lines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                parsed.append((name, json.loads(line[6:])))
    return parsed


async def test_a_reply_streams_as_anthropic_content_blocks(srv: ScriptedModelServer) -> None:
    usage = UsageStep(prompt_tokens=50, completion_tokens=9, cache_read_tokens=30, cache_creation_tokens=5)
    steps = [ReasoningStep(pieces=["hm"], signature="sig"), TextStep(pieces=["a", "b"])]
    srv.enqueue(Reply(steps=[*steps, tool_call("grep", {"q": 1}, id="toolu_x", pieces=2), FinishStep(), usage]))
    with anyio.fail_after(10):
        got = await events(srv, {"model": "claude-x", "stream": True, "messages": []})
    names = [name for name, _ in got]
    assert names[:2] == ["message_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    assert got[0][1]["message"]["usage"] == {
        "input_tokens": 15,
        "cache_creation_input_tokens": 5,
        "cache_read_input_tokens": 30,
        "output_tokens": 1,
    }
    deltas = [(p["index"], p["delta"]) for name, p in got if name == "content_block_delta"]
    assert deltas == [
        (0, {"type": "thinking_delta", "thinking": "hm"}),
        (0, {"type": "signature_delta", "signature": "sig"}),
        (1, {"type": "text_delta", "text": "a"}),
        (1, {"type": "text_delta", "text": "b"}),
        (2, {"type": "input_json_delta", "partial_json": '{"q"'}),
        (2, {"type": "input_json_delta", "partial_json": ": 1}"}),
    ]
    starts = [p["content_block"] for name, p in got if name == "content_block_start"]
    assert [block["type"] for block in starts] == ["thinking", "text", "tool_use"]
    assert (starts[2]["id"], starts[2]["name"]) == ("toolu_x", "grep")
    assert got[-2][1]["delta"]["stop_reason"] == "end_turn"
    assert got[-2][1]["usage"] == {"output_tokens": 9}


async def test_errors_come_in_anthropics_shape(srv: ScriptedModelServer) -> None:
    srv.enqueue(Reply.error(529, "busy", retry_after=2))
    with anyio.fail_after(10):
        async with httpx.AsyncClient() as client:
            answer = await client.post(f"{srv.anthropic_url}/v1/messages", json={"stream": True})
    assert answer.status_code == 529
    assert answer.json() == {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
    assert answer.headers["retry-after"] == "2"


async def test_litellms_anthropic_provider_reads_the_endpoint(litellm: ModuleType, srv: ScriptedModelServer) -> None:
    srv.enqueue(Reply.thinking_then_text(["Let me ", "think."], ["Hi"]))
    with anyio.fail_after(10):
        response = await litellm.acompletion(
            model="anthropic/claude-sonnet-4-5",
            api_base=srv.anthropic_url,
            api_key="sk-ant",
            messages=[{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}],
            stream=True,
        )
        chunks = [chunk async for chunk in response]
    message = litellm.stream_chunk_builder(chunks).choices[0].message
    assert (message.content, message.reasoning_content) == ("Hi", "Let me think.")
    assert message.thinking_blocks[0]["signature"] == "scripted-signature"
    [request] = srv.requests
    assert (request.path, request.headers["x-api-key"]) == ("/v1/messages", "sk-ant")
    assert request.body["system"] == [{"type": "text", "text": "be brief"}]
