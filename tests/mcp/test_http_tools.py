"""The same tools over streamable HTTP and over SSE, with the session's headers."""

from __future__ import annotations

import pytest

from ..support.mcp_servers import http, running, sse

pytestmark = pytest.mark.anyio


async def test_calls_over_streamable_http_carry_the_headers(http_url: str) -> None:
    async with running([http("web", http_url, headers={"X-Demo-Token": "abc"})]) as run:
        assert run.reports == []
        assert (await run.call("mcp__web__add", a=20, b=22)).output == "42"
        assert (await run.call("mcp__web__get_header", name="X-Demo-Token")).output == "abc"
        image = await run.call("mcp__web__echo_image", caption="hi")
        assert image.output == "hi\n[image: image/png]"
        failed = await run.call("mcp__web__fail", message="nope")
        assert failed.failed and "nope" in failed.output


async def test_calls_over_sse_carry_the_headers(sse_url: str) -> None:
    async with running([sse("legacy", sse_url, headers={"X-Demo-Token": "xyz"})]) as run:
        assert run.reports == []
        assert (await run.call("mcp__legacy__add", a=1, b=2)).output == "3"
        assert (await run.call("mcp__legacy__get_header", name="X-Demo-Token")).output == "xyz"
        summed = await run.call("mcp__legacy__structured", terms=[4, 5])
        assert summed.raw_output == {"total": 9, "terms": [4, 5]}
