"""`AGENTS.md -> /proc/self/fd/0` and `AGENTS.md -> /dev/zero` in the real `coder-agent acp` process: the prompt
is answered, by the full agent and by the early first call, and the process's memory stays bounded.

Before, the first made the agent read its own stdin (the prompt and every request after it went unanswered),
the second grew it to the machine's memory. The agent runs here with its address space capped (`MEMORY_CAP`),
so that a regression fails the test, not the machine; its peak RSS is read from /proc after the turn.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import PROTOCOL_VERSION, text_block

from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.acp_client import raw_agent, spawn_agent
from tests.support.agent_env import FIRST_PROMPT_TIMEOUT, EnvFactory
from tests.support.early_stage import chunks, held_env, held_messages, reply_to, start
from tests.support.hostile_checkout import lay_out

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

MEMORY_CAP = 2 << 30  # address space: ~10 x what the agent maps with litellm in (~200 MB); /dev/zero passes it
PEAK_RSS_LIMIT = 400 << 20  # the agent's usual peak: ~60 MiB on the direct path, ~180 MiB with litellm
CASES = {"instructions-stdin": "/proc/", "instructions-zero": "(/dev/zero)"}


def capped_agent() -> list[str]:
    """`python -m coder_agent acp` with its address space capped: the same process, exec'd into."""
    code = (
        "import os, resource, sys; "
        f"resource.setrlimit(resource.RLIMIT_AS, ({MEMORY_CAP}, {MEMORY_CAP})); "
        "os.execv(sys.executable, [sys.executable, '-m', 'coder_agent', 'acp'])"
    )
    return [sys.executable, "-c", code]


def peak_rss(pid: int) -> int:
    """The process's peak resident set size in bytes (VmHWM), while it lives."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM in /proc/<pid>/status")


def system_text(body: dict[str, Any]) -> str:
    message = body["messages"][0]
    assert message["role"] == "system"
    return str(message["content"])


def says_not_read(system: str, project: Path, leads_to: str) -> bool:
    start = f'<project-instructions file="{project / "AGENTS.md"}">\n'
    return start + "[AGENTS.md was not read: it leads outside the project's folders " in system and leads_to in system


@pytest.mark.parametrize("case", list(CASES))
async def test_the_prompt_is_answered_and_memory_stays_bounded(
    case: str, srv: ScriptedModelServer, agent_env: EnvFactory, tmp_path: Path
) -> None:
    checkout = lay_out([case], tmp_path / "project", tmp_path / "fakehome")
    srv.enqueue(Reply.text("Hello."), Reply.text("Again."))
    async with spawn_agent(agent_env(), cwd=checkout.project, command=capped_agent()) as agent:
        with anyio.fail_after(FIRST_PROMPT_TIMEOUT):
            await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
            new = await agent.conn.new_session(cwd=str(checkout.project), mcp_servers=[])
            first = await agent.conn.prompt(session_id=new.session_id, prompt=[text_block("hi")])
            second = await agent.conn.prompt(session_id=new.session_id, prompt=[text_block("and?")])
        peak = peak_rss(agent.proc.pid)
    print(f"{case}, full agent: peak RSS {peak / 2**20:.0f} MiB")  # shown with -rP
    assert (first.stop_reason, second.stop_reason) == ("end_turn", "end_turn")
    assert says_not_read(system_text(srv.requests[0].body), checkout.project, CASES[case])
    assert peak < PEAK_RSS_LIMIT, f"peak RSS {peak / 2**20:.0f} MiB"


@pytest.mark.parametrize("case", list(CASES))
async def test_the_early_first_call_does_not_hang_on_them(
    case: str, srv: ScriptedModelServer, agent_env: EnvFactory, tmp_path: Path
) -> None:
    checkout = lay_out([case], tmp_path / "project", tmp_path / "fakehome")
    env, release = held_env(agent_env, tmp_path)
    srv.enqueue(Reply.text("Early ", "bird"))
    async with raw_agent(env, cwd=checkout.project, command=capped_agent()) as raw:
        await start(raw, checkout.project, "hi")
        early = await held_messages(raw, 2)  # streamed while the runtime's import is held: the early call ran
        release.touch()
        rest: list[dict[str, Any]] = []
        done = await reply_to(raw, 2, rest)
        peak = peak_rss(raw.proc.pid)
    print(f"{case}, early first call: peak RSS {peak / 2**20:.0f} MiB")  # shown with -rP
    assert [c["content"]["text"] for c in chunks(early)] == ["Early ", "bird"]
    assert done["result"]["stopReason"] == "end_turn"
    assert len(srv.requests) == 1  # the early call, taken over
    assert says_not_read(system_text(srv.requests[0].body), checkout.project, CASES[case])
    assert peak < PEAK_RSS_LIMIT, f"peak RSS {peak / 2**20:.0f} MiB"
