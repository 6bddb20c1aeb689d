"""A real `coder-agent serve`: a command that rewrites a large tracked file holds up no client (`/health` answers at
once throughout)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import PROTOCOL_VERSION, text_block

from coder_agent.config.settings import Settings
from coder_agent.scripted.script import Reply, ToolCallStep
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.recording_client import RecordingClient
from tests.support.remote_server import remote_server, sdk_websocket

pytestmark = pytest.mark.anyio

# Seconds. Before the fix the loop stood still for 1.1 s (6 s under load). A loop that does not stand still answers
# in milliseconds, and under load 10 on two cores in up to 0.24 s (the server's threads wait to be scheduled).
HEALTH_BOUND = 0.5


def sh(cwd: Path, script: str) -> None:
    subprocess.run(["/bin/sh", "-c", script], cwd=cwd, check=True, capture_output=True)


# Another client of the server, in a process of its own (its own clock, no share of the server's GIL): asks
# `/health` again and again until its stdin closes, and prints how long each answer took. A request the server's
# event loop cannot answer waits, and its time says so.
POLLER = """
import http.client, sys, threading, time
port, stop = int(sys.argv[1]), threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
while not stop.is_set():
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    started = time.perf_counter()
    connection.request("GET", "/health")
    assert connection.getresponse().status == 200
    print(time.perf_counter() - started, flush=True)
    connection.close()
    stop.wait(0.01)
"""


async def test_health_answers_at_once_while_a_command_rewrites_a_large_tracked_file(
    make_settings: Any, srv: ScriptedModelServer, workspace: Path
) -> None:
    row = "row {:08d}: some data for the table, as a large generated file has\n"
    lines = "".join(row.format(number) for number in range(400_000))
    (workspace / "big.txt").write_text(lines)  # 26 MB
    sh(workspace, "git init -q && git add -A && git -c user.email=t@t -c user.name=t commit -qm big")
    settings: Settings = make_settings(default_mode="bypass")
    rewrite = ToolCallStep(name="run_command", id="c1", arguments=json.dumps({"command": "sed -i '1s/^/x/' big.txt"}))
    srv.enqueue(Reply.tool_calls([rewrite]), Reply.text("done"))
    async with remote_server(settings) as running:
        client = RecordingClient()
        async with sdk_websocket(running, client) as conn:
            await conn.initialize(protocol_version=PROTOCOL_VERSION)
            session = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            poller = [sys.executable, "-c", POLLER, str(running.port)]
            async with await anyio.open_process(poller) as process:
                assert process.stdin is not None and process.stdout is not None
                with anyio.fail_after(60):
                    first = await process.stdout.receive()  # it is asking
                    response = await conn.prompt(session_id=session, prompt=[text_block("rewrite it")])
                    await process.stdin.aclose()
                    printed = first + b"".join([chunk async for chunk in process.stdout])
                    assert await process.wait() == 0
    latencies = [float(line) for line in printed.split()]
    assert response.stop_reason == "end_turn"
    assert (workspace / "big.txt").read_text().startswith("xrow 00000000")
    assert len(latencies) > 1 and max(latencies) < HEALTH_BOUND, f"/health took up to {max(latencies):.2f} s"
