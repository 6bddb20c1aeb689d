"""Streamable HTTP on `/acp`, byte by byte as the RFD has it: status codes, headers, and which SSE stream carries
each message (the connection's, or a session's once the client opened it), in order."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import httpx
import pytest
from websockets.asyncio.client import connect

from coder_agent.config.settings import Settings
from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.remote_server import TEST_OPTIONS, EventStreamReader, Running, http_client, remote_server

pytestmark = pytest.mark.anyio

JSON = {"content-type": "application/json"}


def message(request_id: int | None, method: str, params: dict[str, Any]) -> str:
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if request_id is not None:
        body["id"] = request_id
    return json.dumps(body)


async def initialize(http: httpx.AsyncClient, running: Running) -> str:
    response = await http.post(running.url, content=message(1, "initialize", {"protocolVersion": 1}), headers=JSON)
    assert response.status_code == 200
    assert response.json()["result"]["protocolVersion"] == 1
    return response.headers["acp-connection-id"]


async def test_initialize_answers_in_the_post_and_names_the_connection_then_posts_are_accepted(
    settings: Settings, workspace: Path
) -> None:
    async with remote_server(settings) as running, http_client(running) as http, anyio.create_task_group() as group:
        connection = await initialize(http, running)
        stream = EventStreamReader()
        await stream.open(group, http, running.url, **{"acp-connection-id": connection})
        assert stream.status == 200
        new = message(2, "session/new", {"cwd": str(workspace), "mcpServers": []})
        posted = await http.post(running.url, content=new, headers={**JSON, "acp-connection-id": connection})
        assert posted.status_code == 202 and posted.content == b""
        answer = await stream.next()
        assert answer["id"] == 2 and answer["result"]["sessionId"].startswith("sess_")
        bad = await http.post(running.url, content=b"{not json", headers={**JSON, "acp-connection-id": connection})
        assert bad.status_code == 202
        assert (await stream.next_answer())["error"]["code"] == -32700  # as on stdio: the agent answers it
        # the session's commands came here too: its own stream was not open (after the session/new answer, and
        # before or after the parse error's, whichever the agent wrote first)
        notified = stream.passed_over or [await stream.next()]
        assert [m["params"]["update"]["sessionUpdate"] for m in notified] == ["available_commands_update"]
        ended = await http.delete(running.url, headers={"acp-connection-id": connection})
        assert ended.status_code == 202
        with anyio.fail_after(10):
            await stream.ended.wait()
        after = await http.post(running.url, content=new, headers={**JSON, "acp-connection-id": connection})
        assert after.status_code == 404


async def test_requests_the_rfd_refuses_get_its_status_codes(settings: Settings) -> None:
    async with remote_server(settings) as running, http_client(running) as http:
        connection = await initialize(http, running)
        known = {"acp-connection-id": connection}
        init = message(7, "initialize", {"protocolVersion": 1})
        list_sessions = message(3, "session/list", {})
        cases = [
            (await http.post(running.url, content=init, headers={"content-type": "text/plain"}), 415),
            (await http.post(running.url, content=list_sessions, headers=JSON), 400),  # no connection: initialize
            (await http.post(running.url, content=f"[{list_sessions}]", headers={**JSON, **known}), 501),
            (await http.post(running.url, content=list_sessions, headers={**JSON, "acp-connection-id": "nope"}), 404),
            (await http.get(running.url, headers={**known, "accept": "application/json"}), 406),
            (await http.get(running.url, headers={"accept": "text/event-stream"}), 400),
            (await http.get(running.url, headers={"accept": "text/event-stream", "acp-connection-id": "nope"}), 404),
            (await http.delete(running.url), 400),
            (await http.delete(running.url, headers={"acp-connection-id": "nope"}), 404),
            (await http.put(running.url, content=init, headers=JSON), 405),
        ]
        big = "x" * (TEST_OPTIONS.max_message_bytes + 1)
        cases.append((await http.post(running.url, content=big, headers={**JSON, **known}), 413))
    assert [status for _, status in cases] == [response.status_code for response, _ in cases]


async def test_a_session_stream_carries_its_session_once_open_and_the_connection_stream_the_rest(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    srv.enqueue(Reply.text("one", " two"))
    async with remote_server(settings) as running, http_client(running) as http, anyio.create_task_group() as group:
        connection = await initialize(http, running)
        headers = {**JSON, "acp-connection-id": connection}
        main = EventStreamReader()
        await main.open(group, http, running.url, **{"acp-connection-id": connection})
        await http.post(
            running.url, content=message(2, "session/new", {"cwd": str(workspace), "mcpServers": []}), headers=headers
        )
        session = (await main.next())["result"]["sessionId"]
        own = EventStreamReader()
        await own.open(group, http, running.url, **{"acp-connection-id": connection, "acp-session-id": session})
        prompt = message(3, "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]})
        await http.post(running.url, content=prompt, headers={**headers, "acp-session-id": session})
        seen = []
        while "id" not in (last := await own.next()):
            seen.append(last)
        await http.post(running.url, content=message(4, "session/list", {}), headers=headers)
        listed = await main.next_answer()
        group.cancel_scope.cancel()
    assert last == {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}}
    chunks = [m["params"]["update"] for m in seen if m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"]
    assert "".join(chunk["content"]["text"] for chunk in chunks) == "one two"
    assert all(m["params"]["sessionId"] == session for m in seen)
    assert listed["id"] == 4 and [s["sessionId"] for s in listed["result"]["sessions"]] == [session]
    assert main.ready() == []  # nothing of the session's turn went on the connection stream
    # only what came right after session/new, before the session's stream was open
    assert [m["params"]["update"]["sessionUpdate"] for m in main.passed_over] == ["available_commands_update"]


async def test_a_connection_stream_alone_carries_everything_and_a_load_replays_there_before_its_answer(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    srv.enqueue(Reply.text("first"), Reply.text("second"))
    async with remote_server(settings) as running, http_client(running) as http, anyio.create_task_group() as group:
        # one connection makes a session with a turn in it, and ends
        first = await initialize(http, running)
        stream = EventStreamReader()
        await stream.open(group, http, running.url, **{"acp-connection-id": first})
        await http.post(
            running.url,
            content=message(2, "session/new", {"cwd": str(workspace), "mcpServers": []}),
            headers={**JSON, "acp-connection-id": first},
        )
        session = (await stream.next())["result"]["sessionId"]
        prompt = message(3, "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]})
        await http.post(running.url, content=prompt, headers={**JSON, "acp-connection-id": first})
        while "id" not in await stream.next():
            pass
        await http.delete(running.url, headers={"acp-connection-id": first})

        # a second one loads it while it has that session's stream open, then prompts
        second = await initialize(http, running)
        main, own = EventStreamReader(), EventStreamReader()
        await main.open(group, http, running.url, **{"acp-connection-id": second})
        await own.open(group, http, running.url, **{"acp-connection-id": second, "acp-session-id": session})
        load = message(4, "session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []})
        await http.post(running.url, content=load, headers={**JSON, "acp-connection-id": second})
        replay = []
        while "id" not in (last := await main.next()):
            replay.append(last["params"]["update"]["sessionUpdate"])
        group.cancel_scope.cancel()
    assert last["id"] == 4 and "result" in last  # the load's answer after its whole replay, on one stream
    assert replay[:2] == ["user_message_chunk", "agent_message_chunk"]
    # the session's own stream gets nothing of the replay; only, once loaded, maybe its commands (sent after the
    # load's answer, so whether they are read before the end here depends on timing)
    later = [m["params"]["update"]["sessionUpdate"] for m in own.ready()]
    assert later in ([], ["available_commands_update"])


async def test_a_second_get_for_a_stream_takes_over_from_the_first(settings: Settings, workspace: Path) -> None:
    async with remote_server(settings) as running, http_client(running) as http, anyio.create_task_group() as group:
        connection = await initialize(http, running)
        old, new = EventStreamReader(), EventStreamReader()
        await old.open(group, http, running.url, **{"acp-connection-id": connection})
        await new.open(group, http, running.url, **{"acp-connection-id": connection})
        with anyio.fail_after(10):
            await old.ended.wait()
        await http.post(
            running.url, content=message(2, "session/list", {}), headers={**JSON, "acp-connection-id": connection}
        )
        assert (await new.next())["id"] == 2
        group.cancel_scope.cancel()


async def test_a_connection_whose_client_never_opens_its_stream_ends(settings: Settings) -> None:
    options = replace(TEST_OPTIONS, detach_timeout=0.3)
    async with remote_server(settings, options=options) as running, http_client(running) as http:
        connection = await initialize(http, running)
        [opened] = running.connections
        with anyio.fail_after(10):
            await opened.ended.wait()
        listed = await http.post(
            running.url, content=message(2, "session/list", {}), headers={**JSON, "acp-connection-id": connection}
        )
    assert opened.close_reason == "no connection stream (GET) open for 0.3 s"
    assert listed.status_code == 404


def dechunk(body: bytes) -> bytes:
    """The data of a chunked HTTP/1.1 body, as far as whole chunks go."""
    data = b""
    while b"\r\n" in body:
        size_line, rest = body.split(b"\r\n", 1)
        size = int(size_line, 16)
        if len(rest) < size + 2:
            break
        data, body = data + rest[:size], rest[size + 2 :]
    return data


async def read_events(stream: anyio.abc.ByteStream, count: int) -> list[tuple[int, dict[str, Any]]]:
    """Read an SSE response off a raw connection until `count` events have come: each one's id and message."""
    seen = b""
    with anyio.fail_after(10):
        while (body := dechunk(seen.partition(b"\r\n\r\n")[2])).count(b"\n\n") < count:
            seen += await stream.receive()
    events = []
    for block in body.split(b"\n\n")[:count]:
        fields = dict(line.split(b": ", 1) for line in block.split(b"\n"))
        events.append((int(fields[b"id"]), json.loads(fields[b"data"])))
    return events


async def test_a_stream_resumed_with_last_event_id_gets_again_what_was_sent_after_that_event(
    settings: Settings, workspace: Path
) -> None:
    async with remote_server(settings) as running, http_client(running) as http, anyio.create_task_group() as group:
        connection = await initialize(http, running)
        headers = {**JSON, "acp-connection-id": connection}
        first = await anyio.connect_tcp("127.0.0.1", running.port)
        await first.send(
            (
                f"GET /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {running.token}\r\n"
                f"Accept: text/event-stream\r\nAcp-Connection-Id: {connection}\r\n\r\n"
            ).encode()
        )
        new = message(2, "session/new", {"cwd": str(workspace), "mcpServers": []})
        assert (await http.post(running.url, content=new, headers=headers)).status_code == 202
        # The answer and the commands update were both sent; the stream breaks with the second still on its way.
        (answered, answer), (in_flight, update) = await read_events(first, 2)
        await first.aclose()
        resumed = EventStreamReader()
        resume = {"acp-connection-id": connection, "last-event-id": str(answered)}
        await resumed.open(group, http, running.url, **resume)
        again = await resumed.next()
        await http.post(running.url, content=message(3, "session/list", {}), headers=headers)
        listed = await resumed.next()
        group.cancel_scope.cancel()
    assert answer["id"] == 2 and update["params"]["update"]["sessionUpdate"] == "available_commands_update"
    assert again == update  # sent again, and nothing from before it
    assert listed["id"] == 3
    assert [int(n) for n in resumed.event_ids] == [in_flight, int(resumed.event_ids[1])]
    assert answered < in_flight < int(resumed.event_ids[1])


async def test_json_nested_too_deeply_is_a_clear_400_over_http_and_a_parse_error_over_websocket(
    settings: Settings,
) -> None:
    deep = b"[" * 100_000
    async with remote_server(settings) as running, http_client(running) as http:
        connection = await initialize(http, running)
        with_connection = await http.post(running.url, content=deep, headers={**JSON, "acp-connection-id": connection})
        opening = await http.post(running.url, content=deep, headers=JSON)
        async with connect(running.ws_url, additional_headers=running.auth) as ws:
            await ws.send(deep.decode())
            over_websocket = json.loads(await ws.recv())
            await ws.send(message(1, "initialize", {"protocolVersion": 1}))
            still = json.loads(await ws.recv())
    for response in (with_connection, opening):
        assert response.status_code == 400 and "nested too deeply" in response.json()["error"]
    assert over_websocket["id"] is None and over_websocket["error"]["code"] == -32700
    assert still["result"]["protocolVersion"] == 1
