"""The JSON-RPC connection over in-memory byte streams: dispatch, errors, cancellation, outgoing requests."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel
import pytest
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from coder_agent.acp.errors import RequestError
from coder_agent.acp.jsonrpc import Connection, after_reply


class _Bytes(anyio.abc.ByteReceiveStream):
    def __init__(self, inner: MemoryObjectReceiveStream[bytes]) -> None:
        self._inner = inner

    async def receive(self, max_bytes: int = 65536) -> bytes:
        try:
            return await self._inner.receive()
        except anyio.EndOfStream:
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()


class _Sink(anyio.abc.ByteSendStream):
    def __init__(self, inner: MemoryObjectSendStream[bytes]) -> None:
        self._inner = inner

    async def send(self, item: bytes) -> None:
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()


class Peer:
    """The other end: writes raw bytes to the connection, reads its lines back."""

    def __init__(self, to_conn: MemoryObjectSendStream[bytes], from_conn: MemoryObjectReceiveStream[bytes]) -> None:
        self._to_conn = to_conn
        self._from_conn = from_conn
        self._buffer = b""

    async def send(self, data: bytes | dict[str, Any]) -> None:
        if isinstance(data, dict):
            data = json.dumps(data).encode() + b"\n"
        await self._to_conn.send(data)

    async def close(self) -> None:
        await self._to_conn.aclose()

    async def read(self) -> dict[str, Any]:
        with anyio.fail_after(5):
            while b"\n" not in self._buffer:
                self._buffer += await self._from_conn.receive()
        line, _, self._buffer = self._buffer.partition(b"\n")
        message = json.loads(line)
        assert isinstance(message, dict)
        return message


class EchoDispatcher:
    def __init__(self) -> None:
        self.notifications: list[tuple[str, Any]] = []
        self.release = anyio.Event()
        self.connection: Connection | None = None

    async def handle_request(self, method: str, params: Any) -> Any:
        if method == "echo":
            return params
        if method == "block":
            await self.release.wait()
            return {"released": True}
        if method == "boom":
            raise ValueError("kaboom")
        if method in ("announce", "announce_then_fail"):
            assert self.connection is not None
            connection = self.connection
            after_reply(lambda: connection.notify("announced", params))
            if method == "announce_then_fail":
                raise RequestError.invalid_params("no")
            await anyio.lowlevel.checkpoint()  # whatever the handler still does, the notification waits for the reply
            return {"replied": True}
        if method == "ask":
            assert self.connection is not None
            return {"answer": await self.connection.request("client/question", {"q": 1}, timeout=params["timeout"])}
        raise RequestError.method_not_found(method)

    async def handle_notification(self, method: str, params: Any) -> None:
        self.notifications.append((method, params))
        if method == "unblock":
            self.release.set()


@asynccontextmanager
async def connected() -> AsyncIterator[tuple[Peer, EchoDispatcher, Connection]]:
    to_conn_send, to_conn_recv = anyio.create_memory_object_stream[bytes](100)
    from_conn_send, from_conn_recv = anyio.create_memory_object_stream[bytes](100)
    dispatcher = EchoDispatcher()
    connection = Connection(_Bytes(to_conn_recv), _Sink(from_conn_send), dispatcher, max_line_bytes=1000)
    dispatcher.connection = connection
    async with anyio.create_task_group() as tg:
        tg.start_soon(connection.serve)
        yield Peer(to_conn_send, from_conn_recv), dispatcher, connection
        tg.cancel_scope.cancel()


@pytest.mark.anyio
async def test_request_gets_its_result() -> None:
    async with connected() as (peer, _, _):
        await peer.send({"jsonrpc": "2.0", "id": 7, "method": "echo", "params": {"x": 1}})
        assert await peer.read() == {"jsonrpc": "2.0", "id": 7, "result": {"x": 1}}


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b"not json\n", -32700),
        (b"[1, 2]\n", -32600),
        (b"42\n", -32600),
        (b'{"id": 1, "method": "echo"}\n', -32600),
        (b'{"jsonrpc": "1.0", "id": 1, "method": "echo"}\n', -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": 5}\n', -32600),
        (b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "echo"}\n', -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "nope"}\n', -32601),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "boom"}\n', -32603),
        (b"\xff\xfe garbage\n", -32700),
    ],
)
async def test_bad_input_gets_the_right_error_and_the_connection_survives(raw: bytes, code: int) -> None:
    async with connected() as (peer, _, _):
        await peer.send(raw)
        reply = await peer.read()
        assert reply["error"]["code"] == code
        await peer.send({"jsonrpc": "2.0", "id": 2, "method": "echo", "params": {"still": "alive"}})
        assert (await peer.read())["result"] == {"still": "alive"}


@pytest.mark.anyio
async def test_an_over_long_line_is_rejected_without_buffering_it_and_reading_goes_on() -> None:
    async with connected() as (peer, _, _):
        await peer.send(b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":"' + b"x" * 600)
        await peer.send(b"y" * 600 + b'"}}\n')
        assert (await peer.read())["error"]["code"] == -32600
        await peer.send({"jsonrpc": "2.0", "id": 2, "method": "echo", "params": {}})
        assert (await peer.read())["id"] == 2


@pytest.mark.anyio
async def test_unknown_notifications_are_ignored_silently() -> None:
    async with connected() as (peer, dispatcher, _):
        await peer.send({"jsonrpc": "2.0", "method": "_vendor/whatever", "params": {}})
        await peer.send({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {}})
        assert (await peer.read())["id"] == 1  # nothing was written for the notification
        assert dispatcher.notifications == [("_vendor/whatever", {})]


@pytest.mark.anyio
async def test_a_notification_is_handled_while_a_request_is_still_running() -> None:
    async with connected() as (peer, _, _):
        await peer.send({"jsonrpc": "2.0", "id": 1, "method": "block"})
        await peer.send({"jsonrpc": "2.0", "method": "unblock"})
        assert await peer.read() == {"jsonrpc": "2.0", "id": 1, "result": {"released": True}}


@pytest.mark.anyio
async def test_cancel_request_answers_the_request_with_minus_32800() -> None:
    async with connected() as (peer, _, _):
        await peer.send({"jsonrpc": "2.0", "id": "r1", "method": "block"})
        await peer.send({"jsonrpc": "2.0", "id": 2, "method": "echo", "params": {}})
        assert (await peer.read())["id"] == 2  # the blocked request is running concurrently
        await peer.send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "r1"}})
        reply = await peer.read()
        assert reply["id"] == "r1" and reply["error"]["code"] == -32800


@pytest.mark.anyio
async def test_outgoing_request_is_answered_while_the_reader_keeps_reading() -> None:
    async with connected() as (peer, _, _):
        await peer.send({"jsonrpc": "2.0", "id": 1, "method": "ask", "params": {"timeout": 5}})
        question = await peer.read()
        assert question["method"] == "client/question"
        await peer.send({"jsonrpc": "2.0", "id": 9, "method": "echo", "params": {"meanwhile": True}})
        assert (await peer.read())["result"] == {"meanwhile": True}
        await peer.send({"jsonrpc": "2.0", "id": question["id"], "result": 42})
        assert (await peer.read())["result"] == {"answer": 42}


@pytest.mark.anyio
async def test_a_client_that_never_answers_cannot_hang_the_agent() -> None:
    async with connected() as (peer, _, _):
        await peer.send({"jsonrpc": "2.0", "id": 1, "method": "ask", "params": {"timeout": 0.2}})
        question = await peer.read()
        cancel = await peer.read()
        assert cancel == {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": question["id"]}}
        reply = await peer.read()
        assert reply["error"]["code"] == -32800
        assert "no answer" in reply["error"]["message"]


@pytest.mark.anyio
async def test_peer_errors_come_back_as_request_errors() -> None:
    async with connected() as (peer, _, _):
        await peer.send({"jsonrpc": "2.0", "id": 1, "method": "ask", "params": {"timeout": 5}})
        question = await peer.read()
        await peer.send({"jsonrpc": "2.0", "id": question["id"], "error": {"code": -32002, "message": "nope"}})
        reply = await peer.read()
        assert reply["error"]["code"] == -32002
        assert reply["error"]["message"] == "nope"


@pytest.mark.anyio
async def test_eof_lets_requests_in_flight_answer_then_serve_returns() -> None:
    to_conn_send, to_conn_recv = anyio.create_memory_object_stream[bytes](100)
    from_conn_send, from_conn_recv = anyio.create_memory_object_stream[bytes](100)
    connection = Connection(_Bytes(to_conn_recv), _Sink(from_conn_send), EchoDispatcher(), eof_grace=0.5)
    peer = Peer(to_conn_send, from_conn_recv)
    await peer.send({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"last": True}})
    await peer.send(b'{"jsonrpc":"2.0","id":2,"meth')  # EOF mid-line
    await peer.close()
    with anyio.fail_after(2):
        await connection.serve()
    replies = [await peer.read(), await peer.read()]
    assert {"jsonrpc": "2.0", "id": 1, "result": {"last": True}} in replies
    assert any(r.get("error", {}).get("code") == -32700 for r in replies)


@pytest.mark.anyio
async def test_eof_does_not_wait_forever_for_a_stuck_request() -> None:
    to_conn_send, to_conn_recv = anyio.create_memory_object_stream[bytes](100)
    from_conn_send, _ = anyio.create_memory_object_stream[bytes](100)
    connection = Connection(_Bytes(to_conn_recv), _Sink(from_conn_send), EchoDispatcher(), eof_grace=0.1)
    await to_conn_send.send(b'{"jsonrpc":"2.0","id":1,"method":"block"}\n')
    await to_conn_send.aclose()
    with anyio.fail_after(2):
        await connection.serve()


@pytest.mark.anyio
async def test_what_a_handler_runs_after_its_reply_comes_after_the_reply_and_only_after_a_success() -> None:
    async with connected() as (peer, _, _):
        await peer.send({"jsonrpc": "2.0", "id": 1, "method": "announce", "params": {"n": 1}})
        assert await peer.read() == {"jsonrpc": "2.0", "id": 1, "result": {"replied": True}}
        assert await peer.read() == {"jsonrpc": "2.0", "method": "announced", "params": {"n": 1}}
        await peer.send({"jsonrpc": "2.0", "id": 2, "method": "announce_then_fail", "params": {"n": 2}})
        assert (await peer.read())["error"]["code"] == -32602
        await peer.send({"jsonrpc": "2.0", "id": 3, "method": "echo", "params": {}})
        assert await peer.read() == {"jsonrpc": "2.0", "id": 3, "result": {}}  # nothing was announced for id 2


def test_after_reply_outside_a_dispatched_request_schedules_nothing() -> None:
    assert after_reply(anyio.lowlevel.checkpoint) is False
