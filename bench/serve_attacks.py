"""`coder-agent serve` under attack: the server process's peak memory, and whether it still serves.

Each attack runs against a fresh `coder-agent serve` process (no model configured: nothing loads litellm, prompts
are answered -32000 once parsed and checked) with the usual limit of 1,024 open files. Before the attack one
client opens a session (the code paths loaded), the process's peak RSS is reset to its RSS (`clear_refs`), then:

- ws-large: six WebSocket connections at once, each sending one legal 15 MiB `session/prompt`
- http-large: twelve 15 MiB `session/prompt` POSTs at once (three Streamable HTTP connections)
- ping-flood: one WebSocket client sends 64 MiB of pings and never reads
- long-ids: forty requests with 1 MiB ids (20 strings, 20 objects) on one HTTP connection; RSS also after
- slowloris: 1,100 half-sent requests from 11 addresses; then /health and a token holder's
  initialize + session/new, timed

Printed per attack: RSS before, peak RSS during (VmHWM), and the difference; for slowloris how long /health and
the token holder took (or that they got no answer within 15 s) and the server's open files.

    python bench/serve_attacks.py [--source DIR] [--attacks ws-large,http-large,ping-flood,long-ids,slowloris]

`--source DIR`: run the server from another checkout (PYTHONPATH=DIR), e.g. the code before a change.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
from websockets.asyncio.client import connect

TOKEN = "bench-attack-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
JSON = {"content-type": "application/json", **AUTH}
MiB = 1024 * 1024
BIG = 15 * MiB


def status_kib(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field}")


def reset_peak(pid: int) -> None:
    with open(f"/proc/{pid}/clear_refs", "w") as refs:
        refs.write("5")  # VmHWM := VmRSS


def open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


class Server:
    def __init__(self, source: Path, home: Path) -> None:
        env = {
            **os.environ,
            "PYTHONPATH": str(source),
            "CODER_AGENT_HOME": str(home),
            "XDG_CONFIG_HOME": str(home / "config"),
            "CODER_AGENT_SERVE_TOKEN": TOKEN,
            "CODER_AGENT_MODEL": "",
        }
        command = f"ulimit -n 1024 && exec {sys.executable} -m coder_agent serve --port 0"
        self.process = subprocess.Popen(["sh", "-c", command], env=env, cwd=source, stderr=subprocess.PIPE)
        assert self.process.stderr is not None
        seen = b""
        while (match := re.search(rb"serving ACP on http://[^ ]+:(\d+)/acp", seen)) is None:
            line = self.process.stderr.readline()
            if not line:
                raise RuntimeError(seen.decode(errors="replace"))
            seen += line
        self.port = int(match.group(1))
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.process.stderr is not None
        for _ in self.process.stderr:
            pass

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def request(request_id: Any, method: str, params: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


def big_prompt(session: str) -> bytes:
    prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "x" * BIG}]}
    return request(3, "session/prompt", prompt).encode()


async def websocket_session(port: int, cwd: str) -> tuple[Any, str]:
    ws = await connect(f"ws://127.0.0.1:{port}/acp", additional_headers=AUTH, max_size=None, ping_interval=None)
    await ws.send(request(1, "initialize", {"protocolVersion": 1}))
    await ws.recv()
    await ws.send(request(2, "session/new", {"cwd": cwd, "mcpServers": []}))
    while "result" not in (reply := json.loads(await ws.recv())) or "sessionId" not in reply["result"]:
        pass
    return ws, reply["result"]["sessionId"]


async def warm_up(server: Server, cwd: str) -> None:
    ws, session = await websocket_session(server.port, cwd)
    await ws.send(request(3, "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}))
    while json.loads(await ws.recv()).get("id") != 3:
        pass
    await ws.close()


async def ws_large(server: Server, cwd: str) -> str:
    sessions = [await websocket_session(server.port, cwd) for _ in range(6)]
    answered = 0

    async def send(ws: Any, session: str) -> None:
        nonlocal answered
        await ws.send(big_prompt(session).decode())
        while json.loads(await ws.recv()).get("id") != 3:
            pass
        answered += 1

    with anyio.move_on_after(120):
        async with anyio.create_task_group() as group:
            for ws, session in sessions:
                group.start_soon(send, ws, session)
    for ws, _ in sessions:
        await ws.close()
    return f"{answered}/6 answered"


async def http_connection(http: httpx.AsyncClient, url: str, cwd: str) -> tuple[dict[str, str], str, Any]:
    init = await http.post(url, content=request(1, "initialize", {"protocolVersion": 1}), headers=JSON)
    headers = {**JSON, "acp-connection-id": init.headers["acp-connection-id"]}
    events = await http.send(
        http.build_request("GET", url, headers={**headers, "accept": "text/event-stream"}), stream=True
    )
    lines = events.aiter_lines()
    await http.post(url, content=request(2, "session/new", {"cwd": cwd, "mcpServers": []}), headers=headers)
    async for line in lines:
        if line.startswith("data: ") and '"sessionId"' in line and '"result"' in line:
            return headers, json.loads(line[6:])["result"]["sessionId"], (events, lines)
    raise RuntimeError("no session")


async def http_large(server: Server, cwd: str) -> str:
    url = f"http://127.0.0.1:{server.port}/acp"
    statuses: list[int] = []
    async with httpx.AsyncClient(timeout=httpx.Timeout(120, read=None)) as http:
        connections = [await http_connection(http, url, cwd) for _ in range(3)]

        async def post(headers: dict[str, str], session: str) -> None:
            statuses.append((await http.post(url, content=big_prompt(session), headers=headers)).status_code)

        async with anyio.create_task_group() as group:
            for n in range(12):
                headers, session, _ = connections[n % 3]
                group.start_soon(post, headers, session)
        for _, _, (events, _) in connections:
            await events.aclose()
    return "statuses " + ",".join(str(s) for s in sorted(set(statuses))) + f" ({len(statuses)} POSTs)"


def ping_frame(payload: bytes) -> bytes:
    mask = b"\x01\x02\x03\x04"
    return bytes([0x89, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def flood(port: int) -> int:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(
        (
            f"GET /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    pings = ping_frame(b"p" * 125) * 2000
    sent = 0
    sock.settimeout(3)  # blocked that long: the server reads no more from it
    try:
        while sent < 64 * MiB:
            sent += sock.send(pings)
    except TimeoutError:
        pass
    time.sleep(1)  # let the server answer what it read
    sock.close()
    return sent


async def ping_flood(server: Server, cwd: str) -> str:
    sent = await anyio.to_thread.run_sync(flood, server.port)
    return f"{sent / MiB:.1f} MiB of pings sent before the server stopped reading"


async def long_ids(server: Server, cwd: str) -> str:
    url = f"http://127.0.0.1:{server.port}/acp"
    answers = 0
    async with httpx.AsyncClient(timeout=httpx.Timeout(60, read=None)) as http:
        headers, _, (events, lines) = await http_connection(http, url, cwd)

        async def read() -> None:  # at once: the answers (echoing the ids) must not wait for this client
            nonlocal answers
            async for line in lines:
                if line.startswith("data: ") and ('"result"' in line or '"error"' in line):
                    answers += 1
                    if answers == 40:
                        return

        with anyio.move_on_after(120):
            async with anyio.create_task_group() as group:
                group.start_soon(read)
                for n in range(40):
                    long_id: Any = f"{n}-" + "i" * MiB
                    if n % 2:
                        long_id = {"id": long_id}
                    await http.post(url, content=request(long_id, "session/list", {}), headers=headers)
        kept = status_kib(server.pid, "VmRSS")
        await events.aclose()
    return f"{answers}/40 answered; RSS after, connection open: {kept / 1024:.0f} MiB"


def half_sent(port: int) -> list[socket.socket]:
    opened = []
    for _ in range(100):
        for n in range(2, 13):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.settimeout(5)
            sock.bind((f"127.0.0.{n}", 0))
            try:
                sock.connect(("127.0.0.1", port))
                sock.sendall(b"GET /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ")
            except OSError:
                pass
            opened.append(sock)
    return opened


async def slowloris(server: Server, cwd: str) -> str:
    attack = await anyio.to_thread.run_sync(half_sent, server.port)
    try:
        burst = open_files(server.pid)
        start = time.perf_counter()
        health: str
        try:
            with anyio.fail_after(15):
                async with httpx.AsyncClient(timeout=15) as http:
                    await http.get(f"http://127.0.0.1:{server.port}/health")
            health = f"{(time.perf_counter() - start) * 1000:.0f} ms"
        except (TimeoutError, httpx.HTTPError):
            health = "no answer in 15 s"
        start = time.perf_counter()
        holder: str
        try:
            with anyio.fail_after(15):
                ws, _ = await websocket_session(server.port, cwd)
                await ws.close()
            holder = f"{(time.perf_counter() - start) * 1000:.0f} ms"
        except (TimeoutError, OSError):
            holder = "no answer in 15 s"
        after = open_files(server.pid)
    finally:
        for sock in attack:
            sock.close()
    return (
        f"/health {health}, token holder initialize + session/new {holder}; "
        f"server's open files {burst} right after the burst, {after} then"
    )


ATTACKS: dict[str, Callable[[Server, str], Awaitable[str]]] = {
    "ws-large": ws_large,
    "http-large": http_large,
    "ping-flood": ping_flood,
    "long-ids": long_ids,
    "slowloris": slowloris,
}


async def main(args: argparse.Namespace) -> None:
    source = Path(args.source)
    print(f"coder-agent serve from {source}, limit of open files 1,024")
    print(f"   {'attack':11} {'RSS before':>10} {'peak':>9} {'growth':>9}  what happened")
    for name in args.attacks.split(","):
        with tempfile.TemporaryDirectory() as folder:
            server = Server(source, Path(folder) / "home")
            try:
                await warm_up(server, folder)
                before = status_kib(server.pid, "VmRSS")
                reset_peak(server.pid)
                try:
                    outcome = await ATTACKS[name](server, folder)
                except (httpx.HTTPError, OSError) as exc:
                    outcome = f"the client failed: {type(exc).__name__}: {exc}"
                peak = status_kib(server.pid, "VmHWM")
            finally:
                server.stop()
        growth = (peak - before) / 1024
        print(f"   {name:11} {before / 1024:7.0f} MiB {peak / 1024:5.0f} MiB {growth:+5.0f} MiB  {outcome}", flush=True)
    print(f"   load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", default=str(Path(__file__).resolve().parents[1]), help="the checkout to serve")
    parser.add_argument("--attacks", default=",".join(ATTACKS))
    anyio.run(main, parser.parse_args())
