"""Session store figures: `session/load` of a 1,000-turn session and `session/list` over 10,000 sessions.

The data is written straight through `SqliteSessionStore` (the agent's own wire models and messages, so the
bytes are what the agent stores). Then the real `coder-agent acp` is driven through the benchmarks' client
(bench/client.py), as an editor drives it: each figure runs from writing the request to reading its reply,
every replayed line read.

- load, cold: the first `session/load` in a fresh agent (restore: record + model messages, then the replay)
- load, warm: the same session loaded again in that agent (the replay only)
- list: the first page over all sessions, a page filtered by cwd, and a page deep in (by cursor)
- in-process breakdown: the store's share of a load, without the process and the pipe

Targets: load <= 300 ms, list <= 50 ms. Medians, min-max in brackets; no asserts on time. `--profile` then
profiles a warm load inside this process (the agent's `serve()` on memory streams), by function.

    python bench/sessions.py [--turns 1000] [--sessions 10000] [--loads 5] [--lists 10] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream
from client import Editor, agent, timed_request  # bench/client.py: the one client (the eval harness's launcher)

from coder_agent.acp.errors import RequestError
from coder_agent.acp.schema import (
    AgentMessageChunk,
    ContentToolCallContent,
    TextContent,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
    UserMessageChunk,
)
from coder_agent.agent.sessions.live import Sessions
from coder_agent.llm.messages import AssistantMessage, TextPart, ToolCallRequest, ToolMessage, UserMessage
from coder_agent.store.base import SessionRecord
from coder_agent.store.sqlite import SqliteSessionStore
from evals.harness.agent_process import AgentProcess

BIG = "sess_big"
CWD = "/home/dev/project"
NOTIFICATION = b'{"jsonrpc":"2.0","method":'
CODE = "".join(f"    value_{i} = compute(value_{i - 1}, factor={i})  # step {i}\n" for i in range(1, 41))  # ~2 KB


def stamp(second: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(1_700_000_000 + second))


def big_turn(store: SqliteSessionStore, t: int) -> None:
    """One turn: the prompt, a reply in 6 chunks, a read tool call with its 2 updates, usage: 11 updates."""
    path = f"{CWD}/src/module_{t}.py"
    text = f"Turn {t}: the test for module_{t}.py fails with an off-by-one error; please find and fix it."
    output = TextContent(text=CODE)
    reply = [f"Looking at module_{t}.py ", "the loop ", "starts at 1 ", "but the list ", "is 0-based, ", "so fix it."]
    updates = [
        UserMessageChunk(content=TextContent(text=text), message_id=f"user_{t}"),
        *(AgentMessageChunk(content=TextContent(text=piece), message_id=f"msg_{t}") for piece in reply),
        ToolCallStart(
            tool_call_id=f"call_{t}",
            title=f"Read {path}",
            kind="read",
            raw_input={"path": path},
            locations=[ToolCallLocation(path=path)],
        ),
        ToolCallProgress(tool_call_id=f"call_{t}", status="in_progress"),
        ToolCallProgress(
            tool_call_id=f"call_{t}", status="completed", content=[ContentToolCallContent(content=output)]
        ),
        UsageUpdate(used=2_000 + 40 * t, size=200_000),
    ]
    for update in updates:
        store.append_update(BIG, update.wire_json())
    call = ToolCallRequest(id=f"tc_{t}", name="read_file", arguments=json.dumps({"path": path}))
    messages = [
        UserMessage(parts=[TextPart(text=text)]),
        AssistantMessage(text="".join(reply[:2]), tool_calls=[call]),
        ToolMessage(tool_call_id=call.id, content=CODE),
        AssistantMessage(text="".join(reply)),
    ]
    store.append_messages(BIG, [message.model_dump_json() for message in messages])


def build(db: Path, turns: int, sessions: int) -> None:
    store = SqliteSessionStore(db)
    store.create(SessionRecord(id=BIG, cwd=CWD, title="A long session", created_at=stamp(0), updated_at=stamp(0)))
    for t in range(turns):
        big_turn(store, t)
    for i in range(sessions):
        session_id = f"sess_{i:06d}"
        record = SessionRecord(
            id=session_id, cwd=f"/home/dev/p{i % 20}", title=f"Small task {i}", created_at=stamp(i), updated_at=stamp(i)
        )
        store.create(record)
        for update in (
            UserMessageChunk(content=TextContent(text=f"small task {i}"), message_id=f"u{i}"),
            AgentMessageChunk(content=TextContent(text="Done "), message_id=f"m{i}"),
            AgentMessageChunk(content=TextContent(text="quickly."), message_id=f"m{i}"),
            UsageUpdate(used=500, size=200_000),
        ):
            store.append_update(session_id, update.wire_json())
        messages = [UserMessage(parts=[TextPart(text=f"small task {i}")]), AssistantMessage(text="Done quickly.")]
        store.append_messages(session_id, [message.model_dump_json() for message in messages])
    store.close()


class Agent:
    """`coder-agent acp` through the benchmarks' client; `call` times one request until its reply, counting the
    notifications (the replayed updates) before it."""

    def __init__(self, running: AgentProcess, editor: Editor) -> None:
        self.running = running
        self.editor = editor

    async def call(self, method: str, params: dict[str, Any], error_ok: bool = False) -> tuple[float, int, Any]:
        before = self.editor.notifications
        try:
            elapsed, result = await timed_request(self.running, method, params)
        except RequestError as exc:
            if not error_ok:
                raise RuntimeError(f"{method}: {exc.code} {exc.message}") from exc
            return 0.0, 0, {}
        return elapsed, self.editor.notifications - before, result


@asynccontextmanager
async def started(home: Path) -> AsyncIterator[Agent]:
    env = {
        **os.environ,
        "CODER_AGENT_HOME": str(home),
        "CODER_AGENT_MODEL": "openai/bench",
        "CODER_AGENT_API_BASE": "http://127.0.0.1:9/v1",  # never called: no prompt is sent
        "CODER_AGENT_LOG_LEVEL": "WARNING",
    }
    editor = Editor()
    async with agent(env, home, editor) as running:
        bench = Agent(running, editor)
        await bench.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})  # answered early
        await bench.call("_bench/ready", {}, error_ok=True)  # answered once the runtime has loaded: not timed
        yield bench


def figure(label: str, seconds: Sequence[float], target_ms: float | None = None) -> None:
    ms = [s * 1000 for s in seconds]
    median = statistics.median(ms)
    verdict = "" if target_ms is None else f"  (target {target_ms:g} ms: {'met' if median <= target_ms else 'MISSED'})"
    print(f"{label:<46} {median:8.1f} ms  [{min(ms):.1f}-{max(ms):.1f}]  n={len(ms)}{verdict}")


def timed(action: Callable[[], object], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--loads", type=int, default=5)
    parser.add_argument("--lists", type=int, default=10)
    parser.add_argument("--profile", action="store_true", help="then profile a warm load in process")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        db = home / "sessions.db"
        start = time.perf_counter()
        build(db, args.turns, args.sessions)
        store = SqliteSessionStore(db)
        stored = sum(1 for _ in store.updates(BIG))
        print(
            f"built in {time.perf_counter() - start:.1f} s: {db.stat().st_size / 2**20:.1f} MB (+ WAL); big session "
            f"{stored} updates / {len(store.messages(BIG))} messages; {args.sessions} small sessions; "
            f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
        )

        cold, warm, lists = anyio.run(drive, home, stored, args)
        first, filtered, deep, page = lists
        figure(f"session/load, cold ({stored} updates replayed)", cold, 300)
        figure("session/load, warm (replay only)", warm, 300)
        figure(f"session/list, first page of {args.sessions + 1}", first, 50)
        figure("session/list, cwd filter (1 in 20)", filtered, 50)
        figure(f"session/list, page {page} (by cursor)", deep, 50)

        print("in-process breakdown of a load (no process, no pipe):")
        figure("  read the update bodies from SQLite", timed(lambda: list(store.updates(BIG)), 5))
        parsed = timed(lambda: [json.loads(body) for body in store.updates(BIG)], 5)
        figure("  ... and json.loads each (as replay does)", parsed)
        figure("  restore the model messages (pydantic)", timed(lambda: Sessions._stored_history(store, BIG), 5))
        figure("  store.list, first page of 50", timed(lambda: store.list(None, None, 50), args.lists))
        store.close()
        if args.profile:
            profile_warm_load(home)


async def drive(home: Path, stored: int, args: argparse.Namespace) -> tuple[list[float], list[float], Any]:
    """The timed calls, each through a running agent, as an editor makes them."""
    cold, warm = [], []
    load = {"sessionId": BIG, "cwd": CWD, "mcpServers": []}
    for _ in range(args.loads):
        async with started(home) as bench:
            elapsed, replayed, _ = await bench.call("session/load", load)
            cold.append(elapsed)
            assert replayed == stored + 2, (replayed, stored)  # + the current mode and config options
            warm += [(await bench.call("session/load", load))[0] for _ in range(2)]
    async with started(home) as bench:
        first = [(await bench.call("session/list", {}))[0] for _ in range(args.lists)]
        filtered = [(await bench.call("session/list", {"cwd": "/home/dev/p7"}))[0] for _ in range(args.lists)]
        cursor, page = None, 1
        while page < 101 and (following := (await bench.call("session/list", {"cursor": cursor} if cursor else {}))[2]):
            if "nextCursor" not in following:
                break
            cursor, page = following["nextCursor"], page + 1
        deep = [(await bench.call("session/list", {"cursor": cursor}))[0] for _ in range(args.lists)]
    return cold, warm, (first, filtered, deep, page)


class _Source(anyio.abc.ByteReceiveStream):
    def __init__(self, lines: MemoryObjectReceiveStream[bytes]) -> None:
        self._lines = lines

    async def receive(self, max_bytes: int = 65536) -> bytes:
        return await self._lines.receive()

    async def aclose(self) -> None:
        pass


class _Sink(anyio.abc.ByteSendStream):
    def __init__(self) -> None:
        self.replied = anyio.Event()

    async def send(self, item: bytes) -> None:
        if not item.startswith(NOTIFICATION):
            self.replied.set()

    async def aclose(self) -> None:
        pass


def profile_warm_load(home: Path) -> None:
    """The agent's `serve()` in this process, on memory streams; the second load of the big session profiled."""
    from coder_agent.config.settings import Settings
    from coder_agent.server.assembly import serve

    settings = Settings.load({"CODER_AGENT_HOME": str(home), "CODER_AGENT_MODEL": "openai/bench"}, user_files=False)
    profiler = cProfile.Profile()

    async def run() -> None:
        send, receive = anyio.create_memory_object_stream[bytes](10)
        async with anyio.create_task_group() as tasks:
            sink = _Sink()
            tasks.start_soon(serve, settings, _Source(receive), sink)
            for request_id in (1, 2):
                params = {"sessionId": BIG, "cwd": CWD, "mcpServers": []}
                request = {"jsonrpc": "2.0", "id": request_id, "method": "session/load", "params": params}
                sink.replied = anyio.Event()
                if request_id == 2:  # the first load restored the session: profile the replay alone
                    profiler.enable()
                await send.send(json.dumps(request).encode() + b"\n")
                await sink.replied.wait()
                profiler.disable()
            await send.aclose()

    anyio.run(run)
    print("profile of a warm session/load, in process (by own time):")
    pstats.Stats(profiler, stream=sys.stdout).sort_stats("tottime").print_stats(12)


if __name__ == "__main__":
    main()
