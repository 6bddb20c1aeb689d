"""The mcp SDK is heavy (about 0.45 s): importing the package never loads it, and `run` loads it off the loop."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ..support.mcp_servers import SERVERS, new_tag, processes_with

SCRIPT = """
import sys, anyio
import coder_agent.mcp
from coder_agent.acp.schema import McpServerStdio
assert "mcp" not in sys.modules and "mcp_types" not in sys.modules, "importing coder_agent.mcp imported mcp"

async def main():
    reports = []
    async def report(message):
        reports.append(message)
    servers = coder_agent.mcp.McpServers([], report=report)
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(servers.run)
        await servers.wait_ready(5)
        await servers.close()
    assert "mcp" not in sys.modules, "a session without MCP servers imported mcp"

    config = McpServerStdio(name="demo", command=sys.executable, args=[SERVERS, "stdio", "--tag", TAG])
    servers = coder_agent.mcp.McpServers([config], report=report)
    gaps = []
    async def tick():
        last = anyio.current_time()
        while True:
            await anyio.sleep(0.005)
            now = anyio.current_time()
            gaps.append(now - last)
            last = now
    with anyio.fail_after(60):
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(tick)
            started = anyio.current_time()
            task_group.start_soon(servers.run)
            await servers._loaded.wait()
            loading = anyio.current_time() - started
            await servers.wait_ready(40)
            assert servers.tools() and not reports, reports
            await servers.close()
            task_group.cancel_scope.cancel()
    assert "mcp" in sys.modules
    # Loading mcp on the loop would stall the ticker for the whole import.
    assert max(gaps) < max(0.15, loading / 2), (max(gaps), loading)
    print("ok")

anyio.run(main)
"""


@pytest.mark.e2e
def test_mcp_is_imported_only_when_a_session_has_servers_and_off_the_event_loop() -> None:
    tag = new_tag()
    root = Path(__file__).resolve().parents[2]
    script = f"SERVERS = {SERVERS!r}\nTAG = {tag!r}\n" + SCRIPT
    done = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "ok"
    assert processes_with(tag) == []
