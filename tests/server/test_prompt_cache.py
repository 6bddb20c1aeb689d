"""Prompt caching through a whole session, against a scripted server that caches as the provider does: on the
Anthropic wire each call reads the last one's prefix from the cache (breakpoints on the system prompt and the two
newest user turns) and the cost counts reads and writes at their own prices; on the OpenAI wire the prefix matches
and the session's id keys the provider's cache."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from acp.schema import UsageUpdate

from coder_agent.config.settings import Settings
from coder_agent.llm.wire import model_info
from coder_agent.scripted.script import Reply, Script, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.server_helpers import session

pytestmark = pytest.mark.anyio

MODEL = "anthropic/claude-sonnet-4-5"


def replies() -> Script:
    """Each prompt: a tool call (a file listing), then an answer."""
    return Script(
        replies=[r for _ in range(6) for r in (Reply.tool_calls([tool_call("list_dir", {})]), Reply.text("Done."))]
    )


async def test_on_the_anthropic_wire_each_call_reads_the_last_ones_prefix(settings: Settings, workspace: Path) -> None:
    with ScriptedModelServer(replies(), cache=True) as srv:
        anthropic = settings.model_copy(update={"model": MODEL, "api_base": srv.anthropic_url})
        async with session("bare", anthropic, workspace) as run:
            for turn in range(6):
                await run.prompt(f"task {turn}")
            usage = [u for u in run.client.updates(run.session_id) if isinstance(u, UsageUpdate)]
        log = srv.cache_log
    assert len(log) == 12
    assert log[0].cache_read_tokens == 0 and log[0].cache_creation_tokens > 1024  # tools and system, written once
    for before, call in itertools.pairwise(log):
        assert call.cache_read_tokens >= before.cache_read_tokens + before.cache_creation_tokens  # all it wrote
    read = sum(call.cache_read_tokens for call in log)
    assert read / sum(call.prompt_tokens for call in log) > 0.8
    # The cost the user is told counts reads and writes at their own prices: well under the uncached price.
    info = model_info.info(MODEL)
    uncached = sum(info.cost(call.prompt_tokens, 1) or 0.0 for call in log)
    told = usage[-1].cost
    assert told is not None and told.amount < 0.5 * uncached


async def test_on_the_openai_wire_the_prefix_matches_and_the_session_keys_the_cache(
    settings: Settings, workspace: Path
) -> None:
    with ScriptedModelServer(replies(), cache=True) as srv:
        async with session("bare", settings.model_copy(update={"api_base": srv.url}), workspace) as run:
            for turn in range(3):
                await run.prompt(f"task {turn}")
        log, requests = srv.cache_log, srv.requests
    assert all(call.cache_read_tokens > 1024 for call in log[1:])  # every call after the first found its prefix
    assert log[-1].cache_read_tokens > log[1].cache_read_tokens
    assert {request.body.get("prompt_cache_key") for request in requests} == {None}  # a server of the user's
