"""The agent's own cost per streamed chunk, on both model paths.

1. litellm path, own cost, precisely: real litellm chunk objects, captured once from the scripted server, are
   replayed through the agent's real path: `LiteLLMModel._stream_once` -> `StreamAccumulator` -> `run_turn`
   -> `EditorClient` -> JSON-RPC `Connection` -> a pipe drained by another process (as an editor reads it).
   Only litellm's own work (HTTP, SSE parsing, its chunk objects) is left out.
2. direct path, own cost: the raw SSE bytes of the same reply, captured once as httpx delivered them, are
   replayed through `DirectModel`'s parsing (SSE lines, one json.loads per event, the accumulator) and the
   same turn loop, client and pipe. Only the socket reads are left out.
3. End to end, for scale: the same N-chunk reply streamed live from the scripted server (its own process),
   consumed by litellm alone, through the agent on the litellm path, and through the agent on the direct
   path. On a busy 2-core machine litellm's own ~1 ms per chunk jitters by more than the agent's cost, so
   read these as ratios, not differences.

Every line the agent writes has the secrets it knows masked (`masking`): `--secrets N` (default 5: the model's
key and a few provider keys and tokens in the environment) makes it know N keys besides the environment's.

    python bench/stream.py [--chunks 2000] [--rounds 7] [--secrets 5]
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import anyio

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("REPEATED_STREAMING_CHUNK_LIMIT", "1000000")

from coder_agent.acp.jsonrpc import Connection
from coder_agent.acp.router import Router
from coder_agent.agent.sessions.session import Session
from coder_agent.agent.sessions.transcript import Transcript
from coder_agent.agent.turn import run_turn
from coder_agent.kit import masking
from coder_agent.llm import http_client
from coder_agent.llm.accumulate import StreamAccumulator
from coder_agent.llm.base import Completion
from coder_agent.llm.direct_model import DirectModel
from coder_agent.llm.litellm_model import LiteLLMModel, ModelConfig
from coder_agent.llm.loader import import_litellm
from coder_agent.llm.messages import TextPart, UserMessage
from coder_agent.llm.wire import price_map
from coder_agent.llm.wire.routes import direct_route
from coder_agent.scripted.script import Reply, Script
from coder_agent.server.editor import EditorClient


class _Never(anyio.abc.ByteReceiveStream):
    async def receive(self, max_bytes: int = 65536) -> bytes:
        await anyio.sleep_forever()
        raise AssertionError

    async def aclose(self) -> None:
        pass


class _PipeSink(anyio.abc.ByteSendStream):
    """Writes to a pipe whose other end a separate `cat > /dev/null` drains."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self.lines = 0

    async def send(self, item: bytes) -> None:
        os.write(self._fd, item)
        self.lines += item.count(b'"agent_message_chunk"')  # the streamed text; a usage update follows each call

    async def aclose(self) -> None:
        pass


def bench_session(client: EditorClient) -> Session:
    """A session that sends its updates to `client` and keeps nothing (no store: the stream is measured)."""
    session = Session(id="bench", cwd=str(Path.cwd()))
    session.transcript = Transcript(session.id, client, None)
    return session


async def litellm_alone(api_base: str) -> tuple[float, int]:
    litellm = import_litellm()
    start = time.perf_counter()
    response = await litellm.acompletion(
        model="openai/bench",
        api_base=api_base,
        api_key="sk",
        stream=True,
        num_retries=0,
        max_retries=0,
        timeout=120.0,
        messages=[{"role": "user", "content": "go"}],
        stream_options={"include_usage": True},
    )
    chunks = 0
    async for chunk in response:
        if chunk.choices and chunk.choices[0].delta.content:
            chunks += 1
    return time.perf_counter() - start, chunks


async def through_agent(api_base: str, sink: _PipeSink) -> tuple[float, int]:
    model = LiteLLMModel(ModelConfig(model="openai/bench", api_base=api_base, api_key="sk", max_retries=0))
    connection = Connection(_Never(), sink, Router())
    client = EditorClient(connection)
    session = bench_session(client)
    before = sink.lines
    start = time.perf_counter()
    await run_turn(session, UserMessage(parts=[TextPart(text="go")]), model, client, {})
    return time.perf_counter() - start, sink.lines - before


class _Replay:
    """Stands in for the litellm module: `acompletion` replays captured chunks."""

    def __init__(self, chunks: list[object]) -> None:
        self._chunks = chunks

    async def acompletion(self, **_: object) -> _Replay._Stream:
        return _Replay._Stream(self._chunks)

    def cost_per_token(self, **_: object) -> tuple[float, float]:
        return 0.0, 0.0

    class _Stream:
        received_finish_reason = "stop"  # as litellm's stream wrapper says when the provider sent one

        def __init__(self, chunks: list[object]) -> None:
            self._iter = iter(chunks)

        def __aiter__(self) -> _Replay._Stream:
            return self

        async def __anext__(self) -> object:
            try:
                return next(self._iter)
            except StopIteration:
                raise StopAsyncIteration from None

        async def aclose(self) -> None:
            pass


async def capture(api_base: str) -> list[object]:
    litellm = import_litellm()
    response = await litellm.acompletion(
        model="openai/bench",
        api_base=api_base,
        api_key="sk",
        stream=True,
        num_retries=0,
        max_retries=0,
        messages=[{"role": "user", "content": "go"}],
        stream_options={"include_usage": True},
    )
    return [chunk async for chunk in response]


async def replay_through_agent(chunks: list[object], sink: _PipeSink) -> tuple[float, int]:
    model = LiteLLMModel(ModelConfig(model="openai/bench", max_retries=0))
    replay = _Replay(chunks)
    model_stream = model._stream_once  # the real per-chunk path, minus litellm

    async def stream(messages: object, tools: object = ()) -> object:
        async for event in model_stream(replay, messages, tools):  # type: ignore[arg-type]
            yield event

    model.stream = stream  # type: ignore[assignment,method-assign]
    client = EditorClient(Connection(_Never(), sink, Router()))
    session = bench_session(client)
    before = sink.lines
    start = time.perf_counter()
    await run_turn(session, UserMessage(parts=[TextPart(text="go")]), model, client, {})
    return time.perf_counter() - start, sink.lines - before


def direct_model(api_base: str) -> DirectModel:
    config = ModelConfig(model="openai/bench", api_base=api_base, api_key="sk", max_retries=0)
    prices = price_map.load()
    assert prices is not None
    route = direct_route(config, prices, os.environ)
    assert route is not None
    return DirectModel(config, route, prices)


async def direct_live(api_base: str, sink: _PipeSink) -> tuple[float, int]:
    model = direct_model(api_base)
    client = EditorClient(Connection(_Never(), sink, Router()))
    session = bench_session(client)
    before = sink.lines
    start = time.perf_counter()
    await run_turn(session, UserMessage(parts=[TextPart(text="go")]), model, client, {})
    return time.perf_counter() - start, sink.lines - before


async def capture_bytes(api_base: str) -> list[bytes]:
    """The reply's body, in the pieces httpx handed them over."""
    http_client.prepare()
    model = direct_model(api_base)
    body = model.request([UserMessage(parts=[TextPart(text="go")])], [])
    async with http_client.client().stream("POST", model.route.url, json=body, headers=model._headers()) as response:
        return [piece async for piece in response.aiter_bytes()]


class _ReplayResponse:
    def __init__(self, pieces: list[bytes]) -> None:
        self._pieces = pieces

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        for piece in self._pieces:
            yield piece


async def replay_direct(pieces: list[bytes], api_base: str, sink: _PipeSink) -> tuple[float, int]:
    model = direct_model(api_base)

    async def stream(messages: object, tools: object = ()) -> AsyncIterator[object]:
        acc = StreamAccumulator()
        async for event in model._events(_ReplayResponse(pieces), acc):  # the real per-chunk path, minus sockets
            yield event
        message, finish_reason, usage = acc.finish()
        yield Completion(message=message, finish_reason=finish_reason, usage=usage)

    model.stream = stream  # type: ignore[assignment,method-assign]
    client = EditorClient(Connection(_Never(), sink, Router()))
    session = bench_session(client)
    before = sink.lines
    start = time.perf_counter()
    await run_turn(session, UserMessage(parts=[TextPart(text="go")]), model, client, {})
    return time.perf_counter() - start, sink.lines - before


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--secrets", type=int, default=5, help="keys the agent knows (masked in every line)")
    args = parser.parse_args()
    for number in range(args.secrets):
        masking.learn(f"BENCH_{number}_API_KEY", "sk-" + secrets.token_urlsafe(36))
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "script.json"
        Script(default=Reply.many_chunks(args.chunks)).save(script)
        server = subprocess.Popen(
            [sys.executable, "-m", "coder_agent.scripted", "--script", str(script)], stdout=subprocess.PIPE, text=True
        )
        drain = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
        try:
            assert server.stdout is not None and drain.stdin is not None
            api_base = server.stdout.readline().strip()
            sink = _PipeSink(drain.stdin.fileno())
            chunks = await capture(api_base)
            pieces = await capture_bytes(api_base)
            await replay_through_agent(chunks, sink)  # warm up
            await replay_direct(pieces, api_base, sink)
            own, own_direct = [], []
            for _ in range(args.rounds * 3):
                seconds, n = await replay_through_agent(chunks, sink)
                assert n == args.chunks, n
                own.append(seconds)
                seconds, n = await replay_direct(pieces, api_base, sink)
                assert n == args.chunks, n
                own_direct.append(seconds)
            await litellm_alone(api_base)  # warm up the live paths
            await through_agent(api_base, sink)
            await direct_live(api_base, sink)
            alone, agent, direct = [], [], []
            for _ in range(args.rounds):
                seconds, n = await litellm_alone(api_base)
                assert n == args.chunks, n
                alone.append(seconds)
                seconds, n = await through_agent(api_base, sink)
                assert n == args.chunks, n
                agent.append(seconds)
                seconds, n = await direct_live(api_base, sink)
                assert n == args.chunks, n
                direct.append(seconds)
        finally:
            server.terminate()
            drain.stdin.close() if drain.stdin else None
            server.wait()
            drain.wait()
    a, g, d = statistics.median(alone), statistics.median(agent), statistics.median(direct)
    per_own = statistics.median(own) / args.chunks * 1e6
    per_direct = statistics.median(own_direct) / args.chunks * 1e6
    print(f"chunks per reply: {args.chunks}, rounds: {args.rounds} (medians), secrets known: {args.secrets}")
    print(f"litellm path, agent's own cost (replayed chunks)  {per_own:7.1f} us/chunk  target <= 100 us")
    print(f"direct path, agent's own cost (replayed bytes)    {per_direct:7.1f} us/chunk  target <= 100 us")
    print(f"live: litellm alone                  {a / args.chunks * 1e6:7.1f} us/chunk  ({a * 1000:.0f} ms per reply)")
    print(f"live: agent, litellm path            {g / args.chunks * 1e6:7.1f} us/chunk  ({g * 1000:.0f} ms per reply)")
    print(f"live: agent, direct path             {d / args.chunks * 1e6:7.1f} us/chunk  ({d * 1000:.0f} ms per reply)")
    print(f"live: agent on litellm / litellm alone  {g / a:7.2f} x")


if __name__ == "__main__":
    anyio.run(main)
