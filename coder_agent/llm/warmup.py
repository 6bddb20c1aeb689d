"""Warming litellm's first call: two real streamed calls against a canned responder on 127.0.0.1.

litellm's first call imports and builds what it uses lazily (the OpenAI SDK's resources, its own pydantic
models, HTTP sessions): ~1-3 s on the event loop. Importing modules ahead of time saves part of that;
running the call once saves all of it. So, in the loader's worker thread, a private event loop serves
one canned OpenAI-style and one Anthropic-style stream (text and a tool call) on a local port and streams
them through litellm, the way our requests look. litellm keeps its HTTP clients per event loop, so
nothing of this loop is reused by the agent's.
"""

from __future__ import annotations

import json
import logging
from types import ModuleType
from typing import Any

import anyio
from anyio.abc import SocketAttribute, SocketStream

log = logging.getLogger(__name__)

_TOOLS = [{"type": "function", "function": {"name": "warm", "parameters": {"type": "object", "properties": {}}}}]
_MESSAGES = [{"role": "system", "content": "warm-up"}, {"role": "user", "content": "hi"}]


def _sse(events: list[tuple[str | None, Any]]) -> bytes:
    lines = []
    for name, data in events:
        payload = data if isinstance(data, str) else json.dumps(data)
        lines.append((f"event: {name}\n" if name else "") + f"data: {payload}\n\n")
    return "".join(lines).encode()


def _openai_stream() -> bytes:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {"id": "warm", "object": "chat.completion.chunk", "created": 0, "model": "warm", "choices": [choice]}

    call = {"index": 0, "id": "call_warm", "type": "function", "function": {"name": "warm", "arguments": "{}"}}
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    return _sse(
        [
            (None, chunk({"role": "assistant", "content": "ok"})),
            (None, chunk({"tool_calls": [call]})),
            (None, chunk({}, "tool_calls")),
            (
                None,
                {
                    "id": "warm",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": "warm",
                    "choices": [],
                    "usage": usage,
                },
            ),
            (None, "[DONE]"),
        ]
    )


def _anthropic_stream() -> bytes:
    usage = {"input_tokens": 1, "output_tokens": 1}
    message = {"id": "msg_warm", "type": "message", "role": "assistant", "model": "warm", "content": []}
    tool = {"type": "tool_use", "id": "toolu_warm", "name": "warm", "input": {}}
    return _sse(
        [
            ("message_start", {"type": "message_start", "message": {**message, "usage": usage}}),
            (
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            ),
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}},
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("content_block_start", {"type": "content_block_start", "index": 1, "content_block": tool}),
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 1,
                    "delta": {"type": "input_json_delta", "partial_json": "{}"},
                },
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 1}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": usage}),
            ("message_stop", {"type": "message_stop"}),
        ]
    )


async def _answer(stream: SocketStream) -> None:
    async with stream:
        data = b""
        while b"\r\n\r\n" not in data:
            data += await stream.receive()
        head, _, body = data.partition(b"\r\n\r\n")
        length = next(
            (
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            ),
            0,
        )
        while len(body) < length:
            body += await stream.receive()
        path = head.split(b"\r\n", 1)[0].split(b" ")[1]
        payload = _anthropic_stream() if path.endswith(b"/messages") else _openai_stream()
        headers = (
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\nContent-Length: %d\r\n\r\n"
        )
        await stream.send(headers % len(payload) + payload)


async def _warm(litellm: ModuleType) -> None:
    async with await anyio.create_tcp_listener(local_host="127.0.0.1") as listener, anyio.create_task_group() as tg:
        port = listener.extra(SocketAttribute.local_port)
        tg.start_soon(listener.serve, _answer)
        with anyio.fail_after(20):
            for model, base in (
                ("openai/warm-up", f"http://127.0.0.1:{port}/v1"),
                ("anthropic/warm-up", f"http://127.0.0.1:{port}"),
            ):
                response = await litellm.acompletion(
                    model=model,
                    api_base=base,
                    api_key="warm-up",
                    messages=_MESSAGES,
                    tools=_TOOLS,
                    stream=True,
                    stream_options={"include_usage": True},
                    num_retries=0,
                    max_retries=0,
                    _skip_mcp_handler=True,
                )
                async for _ in response:
                    pass
        tg.cancel_scope.cancel()


def warm_calls(litellm: ModuleType) -> None:
    """Run the warm-up calls (blocking: call it from a worker thread). A failure only leaves the first call cold."""
    try:
        anyio.run(_warm, litellm)
    except Exception as exc:
        log.debug("litellm warm-up failed (its first call will be slower): %r", exc)
