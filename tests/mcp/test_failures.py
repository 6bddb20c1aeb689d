"""Servers that fail: at start, mid-call, by hanging; cancellation; several servers with one dead."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import mcp  # noqa: F401  (loaded up front: the timings below measure connecting, not importing)
import pytest

from coder_agent.acp.schema import McpServerStdio
from coder_agent.agent.tools.base import ToolError
from coder_agent.mcp import McpServers

from ..support.mcp_servers import http, http_server, processes_with, running, stdio

pytestmark = pytest.mark.anyio

# Prints something that is not JSON-RPC and never answers (ignoring its stdin closing, like a stuck server).
JUNK = "import time; print('this is not JSON-RPC', flush=True); time.sleep(3600)"
# The same, first writing to the FIFO named by its first argument: the test then knows the server is up.
SIGNALLING_JUNK = "import sys; open(sys.argv[1], 'w').write('up'); " + JUNK


async def test_a_server_that_never_answers_initialize_is_reported_and_left_out_at_the_timeout(tag: str) -> None:
    started = anyio.current_time()
    mute = McpServerStdio(name="mute", command=sys.executable, args=["-c", JUNK, "--tag", tag])
    async with running([mute], connect_timeout=2.0) as run:
        waited = anyio.current_time() - started
        assert 1.9 <= waited < 3.9  # at the timeout, not after tearing the server down (2 s more, then SIGTERM)
        assert run.reports == [
            "MCP server `mute` could not start: it did not answer within 2 s; it is left out of this session"
        ]
        assert run.mcp.tools() == []
    assert processes_with(tag) == []


async def test_closing_while_a_server_connects_reports_nothing_and_stops_it(tag: str, tmp_path: Path) -> None:
    fifo = tmp_path / "started"
    os.mkfifo(fifo)
    mute = McpServerStdio(name="mute", command=sys.executable, args=["-c", SIGNALLING_JUNK, str(fifo), "--tag", tag])
    reports: list[str] = []

    async def report(message: str) -> None:
        reports.append(message)

    servers = McpServers([mute], connect_timeout=60, report=report)
    descriptor = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        with anyio.fail_after(40):
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(servers.run)
                await anyio.wait_readable(descriptor)
                assert len(processes_with(tag)) == 1
                await servers.close()
    finally:
        os.close(descriptor)
    assert reports == []
    assert processes_with(tag) == []


async def test_a_command_that_does_not_exist_is_reported() -> None:
    missing = McpServerStdio(name="ghost", command="/nonexistent/mcp-server", args=[])
    async with running([missing]) as run:
        assert run.reports == [
            "MCP server `ghost` could not start: command not found: /nonexistent/mcp-server; "
            "it is left out of this session"
        ]
        assert run.mcp.tools() == []


async def test_a_server_that_dies_mid_call_fails_that_call_and_the_next_call_restarts_it(tag: str) -> None:
    async with running([stdio("demo", tag)]) as run:
        first_pid = int((await run.call("mcp__demo__pid")).output)
        with anyio.fail_after(15), pytest.raises(ToolError) as failure:
            await run.call("mcp__demo__die")
        assert str(failure.value).startswith("MCP server `demo` failed during the call: the connection closed")
        assert str(failure.value).endswith("it will be restarted on the next call")
        with anyio.fail_after(40):
            second_pid = int((await run.call("mcp__demo__pid")).output)
        assert second_pid != first_pid
        assert processes_with(tag) != [] and first_pid not in processes_with(tag)
        assert (await run.call("mcp__demo__add", a=1, b=2)).output == "3"
        assert run.reports == []


async def test_a_hung_call_fails_within_the_call_timeout_and_the_server_is_restarted(tag: str) -> None:
    async with running([stdio("demo", tag)], call_timeout=1.0) as run:
        first_pid = int((await run.call("mcp__demo__pid")).output)
        started = anyio.current_time()
        with pytest.raises(ToolError, match=r"^MCP server `demo` did not answer within 1 s; it will be restarted"):
            await run.call("mcp__demo__slow", seconds=60)
        assert anyio.current_time() - started < 5.0
        with anyio.fail_after(40):
            assert int((await run.call("mcp__demo__pid")).output) != first_pid


async def test_cancelling_a_call_abandons_it_and_the_session_stays_usable(tag: str) -> None:
    async with running([stdio("demo", tag)]) as run:
        pid = (await run.call("mcp__demo__pid")).output
        with anyio.move_on_after(0.5) as scope:
            await run.call("mcp__demo__slow", seconds=60)
        assert scope.cancelled_caught
        with anyio.fail_after(20):
            assert (await run.call("mcp__demo__pid")).output == pid
            assert (await run.call("mcp__demo__slow", seconds=0)).output == "slept 0.0"


async def test_one_dead_server_does_not_stop_the_others(tag: str, http_url: str) -> None:
    servers = [
        stdio("local", tag),
        McpServerStdio(name="dead", command="/nonexistent/mcp-server", args=[]),
        http("remote", http_url),
    ]
    async with running(servers) as run:
        names = {tool.name for tool in run.mcp.tools()}
        assert {"mcp__local__add", "mcp__remote__add"} <= names
        assert not any(name.startswith("mcp__dead__") for name in names)
        assert len(run.reports) == 1 and run.reports[0].startswith("MCP server `dead` could not start")
        assert (await run.call("mcp__local__add", a=1, b=1)).output == "2"
        assert (await run.call("mcp__remote__add", a=2, b=2)).output == "4"


async def test_an_unreachable_http_server_is_reported() -> None:
    async with running([http("nowhere", "http://127.0.0.1:9/mcp")]) as run:
        assert len(run.reports) == 1
        assert run.reports[0].startswith("MCP server `nowhere` could not start: ")
        assert run.reports[0].endswith("; it is left out of this session")


async def test_an_http_server_that_dies_mid_call_fails_that_call_and_the_next_one_clearly(tag: str) -> None:
    with http_server("http", tag) as url:
        async with running([http("web", url)]) as run:
            with anyio.fail_after(15), pytest.raises(ToolError, match="failed during the call"):
                await run.call("mcp__web__die")
            with anyio.fail_after(15), pytest.raises(ToolError, match=r"could not be restarted: cannot connect to"):
                await run.call("mcp__web__add", a=1, b=1)


async def test_waiting_for_servers_that_never_run_times_out_quietly() -> None:
    async def report(message: str) -> None:
        raise AssertionError(message)

    servers = McpServers([McpServerStdio(name="idle", command="true", args=[])], report=report)
    with anyio.fail_after(5):
        await servers.wait_ready(0.1)
        await servers.close()
    assert servers.tools() == []
