"""What a session's MCP servers are told they may ask: elicitation only in the modes the editor offers."""

from __future__ import annotations

import json

import pytest

from coder_agent.acp.schema import ElicitationMode

from ..support.mcp_servers import running, stdio

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("modes", "offered"),
    [
        (frozenset(), None),
        (frozenset({"form"}), {"form": {}}),
        (frozenset({"url"}), {"url": {}}),
        (frozenset({"form", "url"}), {"form": {}, "url": {}}),
    ],
)
async def test_the_servers_are_offered_the_editors_elicitation_modes_and_no_more(
    modes: frozenset[ElicitationMode], offered: object, tag: str
) -> None:
    async with running([stdio("demo", tag)], elicitation_modes=modes) as run:
        result = await run.call("mcp__demo__elicitation_offered")
    assert json.loads(result.output) == offered
