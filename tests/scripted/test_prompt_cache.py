"""The scripted server caches prompts as the providers do, and its usage says so: Anthropic's breakpoints (a prefix
up to one, matched exactly against what earlier requests wrote, from a minimum length, within 20 blocks), OpenAI's
automatic prefix matching (from 1,024 tokens, in 128-token steps)."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest

from coder_agent.scripted.script import Reply, Script
from coder_agent.scripted.server import ScriptedModelServer

pytestmark = pytest.mark.anyio

CACHE = {"type": "ephemeral"}
LONG = "x" * 8000  # ~2,000 tokens: above the minimum


def text(value: str, cached: bool = False) -> dict[str, Any]:
    return {"type": "text", "text": value, **({"cache_control": CACHE} if cached else {})}


async def post(srv: ScriptedModelServer, path: str, body: dict[str, Any]) -> dict[str, Any]:
    base = srv.anthropic_url + "/v1" if path == "/messages" else srv.url
    with anyio.fail_after(10):
        async with httpx.AsyncClient() as client:
            response = await client.post(base + path, json=body)
    payload: dict[str, Any] = response.json()
    return payload


def anthropic(system: list[dict[str, Any]], *turns: list[dict[str, Any]]) -> dict[str, Any]:
    roles = ["user", "assistant"]
    messages = [{"role": roles[i % 2], "content": content} for i, content in enumerate(turns)]
    return {"model": "claude-x", "max_tokens": 10, "system": system, "messages": messages}


@pytest.fixture
def cached() -> Any:
    with ScriptedModelServer(Script(default=Reply.text("ok")), cache=True) as srv:
        yield srv


async def test_anthropic_writes_at_a_breakpoint_and_reads_it_back_exactly(cached: ScriptedModelServer) -> None:
    first = await post(cached, "/messages", anthropic([text(LONG, cached=True)], [text("hi", cached=True)]))
    assert first["usage"]["cache_read_input_tokens"] == 0
    written = first["usage"]["cache_creation_input_tokens"]
    assert written > 2000 and first["usage"]["input_tokens"] == 0  # all of it up to the last breakpoint
    follow = anthropic([text(LONG, cached=True)], [text("hi")], [text("hello")], [text("more", cached=True)])
    second = (await post(cached, "/messages", follow))["usage"]
    assert second["cache_read_input_tokens"] == written  # the prefix the first request wrote, found looking back
    assert second["cache_creation_input_tokens"] > 0  # and the new turn written
    changed = anthropic([text(LONG + "!", cached=True)], [text("hi", cached=True)])
    third = (await post(cached, "/messages", changed))["usage"]
    assert third["cache_read_input_tokens"] == 0  # one character of the system prompt: nothing matches


async def test_anthropic_caches_nothing_below_the_minimum_nor_without_a_breakpoint(
    cached: ScriptedModelServer,
) -> None:
    for _ in range(2):
        short = (await post(cached, "/messages", anthropic([text("short", cached=True)], [text("hi")])))["usage"]
        assert (short["cache_read_input_tokens"], short["cache_creation_input_tokens"]) == (0, 0)
    for _ in range(2):
        unmarked = (await post(cached, "/messages", anthropic([text(LONG)], [text("hi")])))["usage"]
        assert (unmarked["cache_read_input_tokens"], unmarked["cache_creation_input_tokens"]) == (0, 0)


async def test_anthropic_refuses_a_fifth_breakpoint(cached: ScriptedModelServer) -> None:
    body = anthropic([text(LONG, cached=True)], *[[text(str(i), cached=True)] for i in range(5)])
    answer = await post(cached, "/messages", body)
    assert answer["type"] == "error" and "cache_control" in answer["error"]["message"]


def chat(*messages: str) -> dict[str, Any]:
    roles = ["system", "user", "assistant"]
    turns = [{"role": roles[min(i, 1 + i % 2)], "content": m} for i, m in enumerate(messages)]
    return {"model": "m", "messages": turns}


async def test_openai_reads_the_longest_prefix_seen_from_1024_tokens_in_steps(cached: ScriptedModelServer) -> None:
    first = (await post(cached, "/chat/completions", chat(LONG, "hi")))["usage"]
    assert "prompt_tokens_details" not in first  # nothing cached yet
    second = (await post(cached, "/chat/completions", chat(LONG, "hi", "ok", "more")))["usage"]
    read = second["prompt_tokens_details"]["cached_tokens"]
    assert read >= 1024 and (read - 1024) % 128 == 0 and read <= first["prompt_tokens"]
    short = (await post(cached, "/chat/completions", chat("short", "hi")))["usage"]
    again = (await post(cached, "/chat/completions", chat("short", "hi", "ok")))["usage"]
    assert "prompt_tokens_details" not in short and "prompt_tokens_details" not in again  # below 1,024 tokens
