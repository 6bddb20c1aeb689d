"""`coder-agent serve` figures, each next to stdio in the same run.

1. Added latency per streamed update. In this process: the agent (`serve()`) over real OS pipes with the stdio
   transport, and over the server's WebSocket and Streamable HTTP (uvicorn on 127.0.0.1), each driven by the
   official SDK's client for that transport. Each update is timed from the agent writing its line to the SDK
   client's `session_update` callback. The model streams one chunk every 10 ms, so updates do not queue.
2. Memory per idle connection. RSS of a real `coder-agent serve` before and after N idle connections
   (initialize + session/new each, then nothing), per transport; next to the RSS of one idle `coder-agent acp`,
   which is what stdio costs per editor. No model is configured here, so neither process loads litellm.
3. Updates/s across 50 sessions. 50 prompts at once, each streaming `--chunks` chunks from the scripted model
   server (its own process): over 50 WebSocket connections to `coder-agent serve`, and over one `coder-agent acp`
   with the 50 sessions on its one stdio connection, alternately, `--rounds` times (each timed run starts once
   the agent process is idle: litellm's background import is over, every chunk takes the litellm path). The
   clients only count lines (no parsing on their side). On a shared machine these move with its load: the load
   average is printed with them.

    python bench/remote.py [--updates 100] [--rounds 3] [--idle 50] [--sessions 50] [--chunks 200] [--figures 1,2,3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import httpx

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("REPEATED_STREAMING_CHUNK_LIMIT", "1000000")

from acp import PROTOCOL_VERSION, connect_to_agent, text_block
from acp.client.connection import ClientSideConnection
from acp.schema import AgentMessageChunk, TextContentBlock

from coder_agent.acp.stdio import stdio_streams
from coder_agent.cli.serve import bind
from coder_agent.config.settings import Settings
from coder_agent.llm.loader import load_litellm
from coder_agent.remote.server import RemoteServer
from coder_agent.scripted.script import FinishStep, Reply, Script, SleepStep, TextStep
from coder_agent.scripted.server import ScriptedModelServer
from coder_agent.server.assembly import serve

TOKEN = "bench-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
MARK = re.compile(rb'"text":"u(\d+) "')


def cpu_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


async def until_idle(pid: int, limit: float = 90.0) -> None:
    """Until the process has used (almost) no CPU for a second: litellm's background import is over."""
    with anyio.move_on_after(limit):
        quiet, last = 0, cpu_ticks(pid)
        while quiet < 2:
            await anyio.sleep(0.5)
            now = cpu_ticks(pid)
            quiet = quiet + 1 if now - last <= 2 else 0
            last = now


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def settings_for(home: Path, api_base: str | None, model: str | None = "openai/bench") -> Settings:
    return Settings.model_validate(
        {"model": model, "api_base": api_base, "api_key": "sk-bench", "home": home, "max_retries": 0}
    )


# ---- 1. latency ----------------------------------------------------------------------------------------------


class Timing:
    """The SDK client's side: when each numbered chunk arrived."""

    def __init__(self, arrived: dict[int, float]) -> None:
        self.arrived = arrived

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if isinstance(update, AgentMessageChunk) and isinstance(update.content, TextContentBlock):
            number = update.content.text.strip().removeprefix("u")
            self.arrived[int(number)] = time.perf_counter()

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def on_connect(self, conn: Any) -> None:
        pass


def note_writes(written: dict[int, float]) -> Callable[[bytes], None]:
    def tap(data: bytes) -> None:
        now = time.perf_counter()
        for match in MARK.finditer(data):
            written[int(match.group(1))] = now

    return tap


class TappedSend(anyio.abc.ByteSendStream):
    def __init__(self, inner: anyio.abc.ByteSendStream, tap: Callable[[bytes], None]) -> None:
        self._inner = inner
        self._tap = tap

    async def send(self, item: bytes) -> None:
        self._tap(item)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()


async def one_turn(conn: ClientSideConnection, cwd: str) -> None:
    await conn.initialize(protocol_version=PROTOCOL_VERSION)
    session = await conn.new_session(cwd=cwd, mcp_servers=[])
    response = await conn.prompt(session_id=session.session_id, prompt=[text_block("count")])
    assert response.stop_reason == "end_turn", response


async def stdio_turn(settings: Settings, cwd: str, written: dict[int, float], arrived: dict[int, float]) -> None:
    to_agent_r, to_agent_w = os.pipe()
    from_agent_r, from_agent_w = os.pipe()
    loop = asyncio.get_running_loop()
    async with stdio_streams(to_agent_r, from_agent_w) as (receive, send), anyio.create_task_group() as group:
        group.start_soon(serve, settings, receive, TappedSend(send, note_writes(written)))
        reader = asyncio.StreamReader(limit=2**24)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(from_agent_r, "rb", 0))
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(to_agent_w, "wb", 0)
        )
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        await one_turn(ClientSideConnection(Timing(arrived), writer, reader), cwd)
        writer.close()  # EOF: the agent stops
    for fd in (to_agent_r, from_agent_w):
        os.close(fd)


@asynccontextmanager
async def in_process_server(settings: Settings, tap: Callable[[bytes], None] | None) -> AsyncIterator[int]:
    sock = bind("127.0.0.1", 0)
    server = RemoteServer(settings, TOKEN)
    if tap is not None:
        server.on_connection = lambda connection: connection.outbox.taps.append(tap)
    async with anyio.create_task_group() as group:
        group.start_soon(server.serve, [sock])
        yield sock.getsockname()[1]
        server.stop()


async def websocket_turn(settings: Settings, cwd: str, written: dict[int, float], arrived: dict[int, float]) -> None:
    from acp.ws import create_websocket_stream

    async with in_process_server(settings, note_writes(written)) as port:
        conn = connect_to_agent(
            Timing(arrived), await create_websocket_stream(f"ws://127.0.0.1:{port}/acp", headers=AUTH)
        )
        await one_turn(conn, cwd)
        await conn.close()


async def http_turn(settings: Settings, cwd: str, written: dict[int, float], arrived: dict[int, float]) -> None:
    from acp.http import create_http_stream

    async with (
        in_process_server(settings, note_writes(written)) as port,
        httpx.AsyncClient(headers=AUTH, timeout=httpx.Timeout(30, read=None)) as http,
    ):
        conn = connect_to_agent(Timing(arrived), create_http_stream(f"http://127.0.0.1:{port}/acp", client=http))
        await one_turn(conn, cwd)
        await conn.close()


def paced_reply(updates: int) -> Reply:
    steps: list[Any] = []
    for number in range(updates):
        steps += [TextStep(pieces=[f"u{number} "]), SleepStep(seconds=0.01)]
    return Reply(steps=[*steps, FinishStep()])


async def latency(args: argparse.Namespace, tmp: Path) -> None:
    await load_litellm()  # already loaded: no import competes with the turns for the CPU
    turns = {"stdio (pipes)": stdio_turn, "WebSocket": websocket_turn, "Streamable HTTP": http_turn}
    samples: dict[str, list[float]] = {name: [] for name in turns}
    with ScriptedModelServer(Script(default=paced_reply(args.updates))) as model:
        for round_number in range(args.rounds + 1):  # the first round warms up and is dropped
            for name, turn in turns.items():
                written: dict[int, float] = {}
                arrived: dict[int, float] = {}
                home = tmp / f"latency-{round_number}-{len(samples[name])}-{name[:4]}"
                await turn(settings_for(home, model.url), str(tmp), written, arrived)
                if round_number:
                    samples[name] += [(arrived[n] - written[n]) * 1e6 for n in written if n in arrived]
    print(
        f"1. latency per streamed update, agent write -> SDK client callback ({args.rounds} x {args.updates} updates)"
    )
    base = statistics.median(samples["stdio (pipes)"])
    for name, values in samples.items():
        values.sort()
        p95 = values[int(len(values) * 0.95)]
        added = statistics.median(values) - base
        print(f"   {name:16} median {statistics.median(values):7.0f} us   p95 {p95:7.0f} us   added {added:+6.0f} us")
    print(f"   load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


# ---- 2. memory -----------------------------------------------------------------------------------------------


def start_serve(env: dict[str, str], *args: str) -> tuple[subprocess.Popen[bytes], int]:
    process = subprocess.Popen(
        [sys.executable, "-m", "coder_agent", "serve", "--port", "0", *args],
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
    )
    assert process.stderr is not None
    seen = b""
    while b"/health" not in seen:
        line = process.stderr.readline()
        if not line:
            raise RuntimeError(f"coder-agent serve did not start: {seen.decode()}")
        seen += line
    match = re.search(rb"http://127\.0\.0\.1:(\d+)/acp", seen)
    assert match, seen
    # keep draining stderr, so that logging never blocks the server
    threading_drain(process)
    return process, int(match.group(1))


def threading_drain(process: subprocess.Popen[bytes]) -> None:
    import threading

    def drain() -> None:
        assert process.stderr is not None
        for _ in process.stderr:
            pass

    threading.Thread(target=drain, daemon=True).start()


async def settle() -> None:
    await anyio.sleep(1.5)


async def open_idle(kind: str, port: int, cwd: str, stack: list[Any]) -> None:
    if kind == "WebSocket":
        from acp.ws import create_websocket_stream

        conn = connect_to_agent(Timing({}), await create_websocket_stream(f"ws://127.0.0.1:{port}/acp", headers=AUTH))
    else:
        from acp.http import create_http_stream

        http = httpx.AsyncClient(headers=AUTH, timeout=httpx.Timeout(30, read=None))
        stack.append(http)
        conn = connect_to_agent(Timing({}), create_http_stream(f"http://127.0.0.1:{port}/acp", client=http))
    await conn.initialize(protocol_version=PROTOCOL_VERSION)
    await conn.new_session(cwd=cwd, mcp_servers=[])
    stack.append(conn)


async def close_all(stack: list[Any]) -> None:
    for item in reversed(stack):
        await (item.aclose() if isinstance(item, httpx.AsyncClient) else item.close())


async def memory(args: argparse.Namespace, tmp: Path) -> None:
    env = {
        **os.environ,
        "CODER_AGENT_SERVE_TOKEN": TOKEN,
        "CODER_AGENT_MODEL": "",
        "XDG_CONFIG_HOME": str(tmp / "config"),
    }
    print(f"2. memory per idle connection (initialize + session/new, then idle; {args.idle} connections)")
    for kind in ("WebSocket", "Streamable HTTP"):
        process, port = start_serve({**env, "CODER_AGENT_HOME": str(tmp / f"mem-{kind[:4]}")})
        stack: list[Any] = []
        try:
            await open_idle(kind, port, str(tmp), stack)  # warm: the code paths of a connection are loaded
            await settle()
            before = rss_kib(process.pid)
            for _ in range(args.idle):
                await open_idle(kind, port, str(tmp), stack)
            await settle()
            after = rss_kib(process.pid)
            print(
                f"   {kind:16} {(after - before) / args.idle:7.0f} KiB per connection "
                f"(server RSS {before / 1024:.0f} -> {after / 1024:.0f} MiB)"
            )
            await close_all(stack)
        finally:
            process.terminate()
            process.wait(timeout=30)
    stdio = subprocess.Popen(
        [sys.executable, "-m", "coder_agent", "acp"],
        env={**env, "CODER_AGENT_HOME": str(tmp / "mem-stdio")},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert stdio.stdin is not None and stdio.stdout is not None
    for message in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(tmp), "mcpServers": []}},
    ):
        stdio.stdin.write(json.dumps(message).encode() + b"\n")
        stdio.stdin.flush()
        stdio.stdout.readline()
    await settle()
    print(f"   {'stdio':16} {rss_kib(stdio.pid):7.0f} KiB per editor: a whole `coder-agent acp` process each")
    stdio.stdin.close()
    stdio.wait(timeout=30)


# ---- 3. throughput -------------------------------------------------------------------------------------------


def request(request_id: int, method: str, params: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


async def websocket_throughput(port: int, pid: int, cwd: str, sessions: int) -> tuple[int, float]:
    from websockets.asyncio.client import connect

    # No keepalive pings: on a loaded machine this counting client can fall behind the server, and then its
    # own ping's answer waits behind the data it has not read yet.
    sockets = [
        await connect(f"ws://127.0.0.1:{port}/acp", additional_headers=AUTH, max_size=None, ping_interval=None)
        for _ in range(sessions)
    ]
    ids = []
    for ws in sockets:
        await ws.send(request(1, "initialize", {"protocolVersion": 1}))
        await ws.recv()
        await ws.send(request(2, "session/new", {"cwd": cwd, "mcpServers": []}))
        ids.append(json.loads(await ws.recv())["result"]["sessionId"])
    await warm_up(sockets[0], ids[0])
    await until_idle(pid)
    counts = [0] * sessions

    async def run(index: int) -> None:
        ws = sockets[index]
        await ws.send(
            request(9, "session/prompt", {"sessionId": ids[index], "prompt": [{"type": "text", "text": "go"}]})
        )
        async for frame in ws:
            if isinstance(frame, str) and frame.startswith('{"jsonrpc":"2.0","id":9'):
                return
            counts[index] += 1

    start = time.perf_counter()
    async with anyio.create_task_group() as group:
        for index in range(sessions):
            group.start_soon(run, index)
    elapsed = time.perf_counter() - start
    for ws in sockets:
        await ws.close()
    return sum(counts), elapsed


async def warm_up(ws: Any, session: str) -> None:
    """One prompt before timing (the turn's code paths loaded)."""
    await ws.send(request(8, "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "warm"}]}))
    async for frame in ws:
        if isinstance(frame, str) and frame.startswith('{"jsonrpc":"2.0","id":8'):
            break


async def stdio_throughput(env: dict[str, str], cwd: str, sessions: int) -> tuple[int, float]:
    command = [sys.executable, "-m", "coder_agent", "acp"]
    async with await anyio.open_process(command, env=env, stderr=subprocess.DEVNULL) as process:
        assert process.stdin is not None and process.stdout is not None
        lines = LineReader(process.stdout)
        await process.stdin.send(request(1, "initialize", {"protocolVersion": 1}).encode() + b"\n")
        await lines.next()
        ids = []
        for n in range(sessions):
            await process.stdin.send(request(100 + n, "session/new", {"cwd": cwd, "mcpServers": []}).encode() + b"\n")
            while "sessionId" not in (reply := json.loads(await lines.next())).get("result", {}):
                pass
            ids.append(reply["result"]["sessionId"])
        await process.stdin.send(
            request(8, "session/prompt", {"sessionId": ids[0], "prompt": [{"type": "text", "text": "w"}]}).encode()
            + b"\n"
        )
        while not (await lines.next()).startswith(b'{"jsonrpc":"2.0","id":8'):
            pass
        await until_idle(process.pid)
        start = time.perf_counter()
        for n, session in enumerate(ids):
            prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}
            await process.stdin.send(request(1000 + n, "session/prompt", prompt).encode() + b"\n")
        updates, answered = 0, 0
        while answered < sessions:
            line = await lines.next()
            if line.startswith(b'{"jsonrpc":"2.0","id":1'):
                answered += 1
            else:
                updates += 1
        elapsed = time.perf_counter() - start
        await process.stdin.aclose()
        await process.wait()
    return updates, elapsed


class LineReader:
    def __init__(self, stream: anyio.abc.ByteReceiveStream) -> None:
        self._stream = stream
        self._buffer = b""

    async def next(self) -> bytes:
        while b"\n" not in self._buffer:
            self._buffer += await self._stream.receive()
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line


async def throughput(args: argparse.Namespace, tmp: Path) -> None:
    script = tmp / "script.json"
    Script(default=Reply(steps=[TextStep(pieces=[f"c{n} " for n in range(args.chunks)]), FinishStep()])).save(script)
    model = subprocess.Popen(
        [sys.executable, "-m", "coder_agent.scripted", "--script", str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert model.stdout is not None
        api_base = model.stdout.readline().strip()
        env = {
            **os.environ,
            "CODER_AGENT_SERVE_TOKEN": TOKEN,
            "CODER_AGENT_MODEL": "openai/bench",
            "CODER_AGENT_API_BASE": api_base,
            "CODER_AGENT_API_KEY": "sk-bench",
            "XDG_CONFIG_HOME": str(tmp / "config"),
        }
        print(f"3. updates/s across {args.sessions} sessions, {args.chunks} chunks each, all prompted at once")
        rates: dict[str, list[float]] = {"WebSocket": [], "stdio": []}
        for round_number in range(args.rounds):
            home = {**env, "CODER_AGENT_HOME": str(tmp / f"tp-ws-{round_number}")}
            process, port = start_serve(home)
            try:
                updates, elapsed = await websocket_throughput(port, process.pid, str(tmp), args.sessions)
            finally:
                process.terminate()
                process.wait(timeout=30)
            rates["WebSocket"].append(updates / elapsed)
            home = {**env, "CODER_AGENT_HOME": str(tmp / f"tp-stdio-{round_number}")}
            updates, elapsed = await stdio_throughput(home, str(tmp), args.sessions)
            rates["stdio"].append(updates / elapsed)
        connections = {"WebSocket": f"{args.sessions} connections", "stdio": "one connection"}
        for name, values in rates.items():
            low, high = min(values), max(values)
            print(
                f"   {name:16} {statistics.median(values):7.0f} updates/s (median of {args.rounds}; "
                f"{low:.0f}-{high:.0f}; {updates} updates a round, {connections[name]})"
            )
        print(f"   load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    finally:
        model.terminate()
        model.wait(timeout=30)


async def main(args: argparse.Namespace) -> None:
    logging.getLogger().setLevel(logging.CRITICAL)  # the SDK client logs its own shutdown noise
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        figures = {"1": latency, "2": memory, "3": throughput}
        for figure in args.figures.split(","):
            await figures[figure.strip()](args, tmp)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--updates", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--idle", type=int, default=50)
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--chunks", type=int, default=200)
    parser.add_argument("--figures", default="1,2,3", help="which figures, e.g. 3 or 1,3")
    anyio.run(main, parser.parse_args())
