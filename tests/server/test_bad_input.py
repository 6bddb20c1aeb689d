"""Bytes no well-behaved client sends, over plain pipes: each gets the right JSON-RPC error (or none), and the
agent keeps serving. Cases run both as the first line (which the start-up fast path reads) and after one.

The agent runs in this process, on OS pipes, through the same early reader and stdio transport as
`coder-agent acp` (`inproc_raw(..., stdio=True)`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from coder_agent.config.settings import Settings
from tests.support.driving import initialize, request
from tests.support.inproc import InprocRaw, inproc_raw

pytestmark = pytest.mark.anyio

TEN_MB = 10 * 1024 * 1024


@pytest.fixture
def env(make_settings: Any) -> Settings:
    return make_settings(model=None)  # nothing here needs one


@pytest.fixture(params=["first line", "after initialize"])
def position(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def start(raw: InprocRaw, position: str) -> None:
    if position == "after initialize":
        await raw.send_json(initialize(0))
        assert (await raw.read_message())["id"] == 0


async def assert_still_serving(raw: InprocRaw) -> None:
    """The agent still serves, and the very next line it writes answers a fresh `initialize`."""
    assert raw.serving
    await raw.send_json(initialize("still-there"))
    reply = await raw.read_message()
    assert reply["id"] == "still-there", reply
    assert reply["result"]["protocolVersion"] == 1


def error_of(reply: dict[str, Any], request_id: Any) -> dict[str, Any]:
    assert reply["id"] == request_id and "error" in reply, reply
    return dict(reply["error"])


@pytest.mark.parametrize(
    ("line", "code", "reply_id"),
    [
        pytest.param(b"this is not json\n", -32700, None, id="not-json"),
        pytest.param(b'{"jsonrpc": "2.0", "id": 1, "method": \xff\xfe}\n', -32700, None, id="not-utf8"),
        pytest.param(b'"just a string"\n', -32600, None, id="json-string"),
        pytest.param(b"42\n", -32600, None, id="json-number"),
        pytest.param(json.dumps([initialize(1), initialize(2)]).encode() + b"\n", -32600, None, id="batch"),
        pytest.param(b"[]\n", -32600, None, id="empty-batch"),
        pytest.param(
            b'{"id": 3, "method": "initialize", "params": {"protocolVersion": 1}}\n', -32600, 3, id="no-jsonrpc"
        ),
        pytest.param(b'{"jsonrpc": "1.0", "id": 4, "method": "initialize"}\n', -32600, 4, id="jsonrpc-1.0"),
        pytest.param(b'{"jsonrpc": "2.0", "id": 5, "method": 7}\n', -32600, 5, id="method-not-a-string"),
        pytest.param(b'{"jsonrpc": "2.0", "id": 6, "method": "no/such_method"}\n', -32601, 6, id="unknown-method"),
        pytest.param(b'{"jsonrpc": "2.0", "id": 7, "method": "_vendor/thing"}\n', -32601, 7, id="unknown-ext-method"),
        pytest.param(
            b'{"jsonrpc": "2.0", "id": 8, "method": "session/new", "params": [1]}\n', -32602, 8, id="array-params"
        ),
        pytest.param(  # kept, and echoed, for the request's life: refused
            json.dumps({"jsonrpc": "2.0", "id": "i" * 257, "method": "session/list"}).encode() + b"\n",
            -32600,
            None,
            id="id-over-256-characters",
        ),
    ],
)
async def test_a_malformed_message_gets_its_error_and_the_agent_keeps_serving(
    env: Settings, workspace: Path, position: str, line: bytes, code: int, reply_id: Any
) -> None:
    async with inproc_raw(env, stdio=True) as raw:
        await start(raw, position)
        await raw.send_bytes(line)
        error = error_of(await raw.read_message(), reply_id)
        await assert_still_serving(raw)
    assert error["code"] == code


async def test_wrong_param_types_are_invalid_params_with_the_validation_detail(
    env: Settings, workspace: Path, position: str
) -> None:
    async with inproc_raw(env, stdio=True) as raw:
        await start(raw, position)
        await raw.send_json(request(10, "session/new", {"cwd": 5, "mcpServers": []}))
        error = error_of(await raw.read_message(), 10)
        await raw.send_json(request(11, "session/prompt", {"sessionId": "s", "prompt": "not a list"}))
        prompt_error = error_of(await raw.read_message(), 11)
        await assert_still_serving(raw)
    assert error["code"] == -32602
    assert "cwd" in error["message"]
    assert any(detail["loc"] == ["cwd"] and detail["type"] == "string_type" for detail in error["data"]), error
    assert prompt_error["code"] == -32602
    assert any(detail["loc"][0] == "prompt" for detail in prompt_error["data"]), prompt_error


@pytest.mark.parametrize(
    "message",
    [
        pytest.param({"jsonrpc": "2.0", "method": "no/such_notification", "params": {"x": 1}}, id="unknown"),
        pytest.param({"jsonrpc": "2.0", "method": "_vendor/ping"}, id="unknown-ext"),
        pytest.param({"jsonrpc": "2.0", "method": "session/cancel"}, id="cancel-without-params"),
        pytest.param(
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": 5}}, id="cancel-bad-params"
        ),
        pytest.param({"jsonrpc": "2.0", "id": 99, "result": {}}, id="stray-response"),
    ],
)
async def test_a_notification_it_cannot_use_or_a_stray_response_gets_no_reply_at_all(
    env: Settings, workspace: Path, position: str, message: dict[str, Any]
) -> None:
    async with inproc_raw(env, stdio=True) as raw:
        await start(raw, position)
        await raw.send_json(message)
        await assert_still_serving(raw)


async def test_blank_lines_are_ignored(env: Settings, workspace: Path, position: str) -> None:
    async with inproc_raw(env, stdio=True) as raw:
        await start(raw, position)
        await raw.send_bytes(b"\n   \n\r\n\t\n")
        await assert_still_serving(raw)


async def test_a_10_mb_prompt_for_an_unknown_session_is_resource_not_found(
    env: Settings, workspace: Path, position: str
) -> None:
    prompt = [{"type": "text", "text": "x" * TEN_MB}]
    line = json.dumps(request(20, "session/prompt", {"sessionId": "sess_unknown", "prompt": prompt})).encode()
    async with inproc_raw(env, stdio=True) as raw:
        await start(raw, position)
        await raw.send_bytes(line + b"\n")
        error = error_of(await raw.read_message(timeout=20), 20)
        await assert_still_serving(raw)
    assert error["code"] == -32002


async def test_10_mb_of_garbage_on_one_line_is_a_parse_error(env: Settings, workspace: Path, position: str) -> None:
    async with inproc_raw(env, stdio=True) as raw:
        await start(raw, position)
        await raw.send_bytes(b"{" + b"garbage " * (TEN_MB // 8) + b"\n")
        error = error_of(await raw.read_message(timeout=20), None)
        await assert_still_serving(raw)
    assert error["code"] == -32700


async def test_eof_in_the_middle_of_a_line_ends_the_agent_cleanly(
    env: Settings, workspace: Path, position: str
) -> None:
    async with inproc_raw(env, stdio=True) as raw:
        await start(raw, position)
        await raw.send_bytes(b'{"jsonrpc": "2.0", "id": 30, "method": "sess')
        raw.close_input()
        await raw.wait_stopped(timeout=2)
    # The cut-off line may be reported as unparsable; nothing else may follow it.
    late = [m for m in raw.messages if m.get("id") != 0]
    assert all(m["error"]["code"] == -32700 and m["id"] is None for m in late), late


async def test_requests_packed_into_one_write_split_across_writes_or_ending_in_crlf_are_all_answered(
    env: Settings, workspace: Path
) -> None:
    first, second, third = (json.dumps(initialize(n)).encode() for n in (1, 2, 3))
    async with inproc_raw(env, stdio=True) as raw:
        await raw.send_bytes(first + b"\r\n" + second + b"\n" + third[:10])  # the start-up read sees all of this
        await raw.send_bytes(third[10:] + b"\r\n")
        replies = [await raw.read_message() for _ in range(3)]
        await assert_still_serving(raw)
    assert [reply["id"] for reply in replies] == [1, 2, 3]
    assert all(reply["result"]["protocolVersion"] == 1 for reply in replies)


async def test_a_deeply_nested_json_line_is_a_parse_error_not_a_crash(
    env: Settings, workspace: Path, position: str
) -> None:
    async with inproc_raw(env, stdio=True) as raw:
        await start(raw, position)
        # Not shown to the harness's own line checker: it would hit the same RecursionError.
        await raw.send_unchecked(b"[" * 100_000 + b"\n")
        error = error_of(await raw.read_message(), None)
        await assert_still_serving(raw)
    assert error["code"] == -32700


async def test_an_initialize_with_malformed_capabilities_gets_the_same_answer_on_the_first_line_as_later(
    env: Settings, workspace: Path
) -> None:
    def bad(request_id: int) -> dict[str, Any]:
        message = initialize(request_id)
        message["params"]["clientCapabilities"] = {"fs": "yes please"}
        return message

    async with inproc_raw(env, stdio=True) as raw:
        await raw.send_json(bad(1))
        on_first_line = await raw.read_message()
        await raw.send_json(bad(2))
        later = await raw.read_message()
        await assert_still_serving(raw)
    assert ("error" in on_first_line, on_first_line.get("error", {}).get("code")) == (
        "error" in later,
        later.get("error", {}).get("code"),
    )
