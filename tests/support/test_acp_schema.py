"""The wire checker: good agent output passes; each kind of bad line is caught, with the line in the report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.acp_schema import AgentMessageValidator, SchemaUnavailableError, fetch_from_npm, find_schema_path

TEXT = {"type": "text", "text": "hi"}


def line(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def client_request(request_id: int, method: str, params: Any) -> bytes:
    return line({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


def update(body: dict[str, Any]) -> dict[str, Any]:
    params = {"sessionId": "s1", "update": body}
    return {"jsonrpc": "2.0", "method": "session/update", "params": params}


def after_prompt(*agent_lines: bytes) -> AgentMessageValidator:
    """A validator that has seen the client send initialize (id 0) and session/prompt (id 1)."""
    validator = AgentMessageValidator()
    validator.feed_client(client_request(0, "initialize", {"protocolVersion": 1}))
    validator.feed_client(client_request(1, "session/prompt", {"sessionId": "s1", "prompt": [TEXT]}))
    for raw in agent_lines:
        validator.feed_agent(raw)
    validator.end_agent()
    return validator


GOOD = [
    {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1, "agentCapabilities": {"loadSession": True}}},
    update({"sessionUpdate": "agent_message_chunk", "content": TEXT}),
    update({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Read a.py", "kind": "read"}),
    {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "session/request_permission",
        "params": {
            "sessionId": "s1",
            "toolCall": {"toolCallId": "c1"},
            "options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}],
        },
    },
    {"jsonrpc": "2.0", "method": "_coder/status", "params": {"anything": True}},
    {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 7}},
    {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "end_turn"}},
]


def test_valid_agent_messages_pass() -> None:
    validator = after_prompt(*(line(message) for message in GOOD))
    validator.assert_valid()
    assert validator.messages == GOOD


def test_lines_split_across_any_chunks_are_reassembled() -> None:
    stream = b"".join(line(message) for message in GOOD)
    validator = after_prompt(*(stream[i : i + 1] for i in range(len(stream))))
    validator.assert_valid()
    assert len(validator.agent_lines) == len(GOOD)


def test_an_error_response_passes_whatever_the_method() -> None:
    error = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Invalid params"}}
    after_prompt(line(error)).assert_valid()


BAD = {
    "kind instead of sessionUpdate": line(update({"kind": "agent_message_chunk", "content": TEXT})),
    "stopReason done": line({"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "done"}}),
    "not JSON": b"hello from a stray print()\n",
    "an array": line([{"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "end_turn"}}]),
    "two objects on one line": line(GOOD[1]).rstrip(b"\n") + line(GOOD[1]),
    "an object split by a raw newline": line(GOOD[1]).replace(b'"content"', b'\n"content"'),
    "no newline before EOF": line(GOOD[1]).rstrip(b"\n"),
    "empty line": b"\n",
    "CRLF": line(GOOD[1]).replace(b"\n", b"\r\n"),
    "not UTF-8": line(GOOD[1]).replace(b"hi", b"h\xff"),
    "NaN": b'{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn","_meta":{"x":NaN}}}\n',
    "duplicate keys": b'{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}\n',
    "jsonrpc 1.0": line({"jsonrpc": "1.0", "id": 1, "result": {"stopReason": "end_turn"}}),
    "unknown top-level member": line({"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "end_turn"}, "x": 1}),
    "result for an id never sent": line({"jsonrpc": "2.0", "id": 99, "result": {"stopReason": "end_turn"}}),
    "wrong result type for the method": line({"jsonrpc": "2.0", "id": 0, "result": {"sessionId": "s1"}}),
    "both result and error": line(
        {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "end_turn"}, "error": {"code": 1, "message": "x"}}
    ),
    "unknown notification": line({"jsonrpc": "2.0", "method": "session/progress", "params": {}}),
    "agent calls an agent-side method": line(
        {"jsonrpc": "2.0", "id": 5, "method": "session/prompt", "params": {"sessionId": "s1", "prompt": []}}
    ),
    "session/update without params": line({"jsonrpc": "2.0", "method": "session/update"}),
    "status cancelled (v2 only)": line(
        update({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "cancelled"})
    ),
}


@pytest.mark.parametrize("raw", BAD.values(), ids=BAD.keys())
def test_bad_line_is_reported_with_the_line(raw: bytes) -> None:
    validator = after_prompt(raw)
    assert validator.violations
    with pytest.raises(AssertionError, match="invalid line") as caught:
        validator.assert_valid()
    assert repr(raw.decode("utf-8", "replace").split("\n")[0])[1:20] in str(caught.value)


def test_a_second_response_to_the_same_request_is_reported() -> None:
    done = line({"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "end_turn"}})
    validator = after_prompt(done, done)
    assert [v.line_no for v in validator.violations] == [2]


def test_the_report_names_the_missing_discriminator() -> None:
    validator = after_prompt(BAD["kind instead of sessionUpdate"])
    assert "not a valid SessionNotification: $.update.sessionUpdate: missing" in validator.report()


def test_schema_path_prefers_the_environment_variable(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text("{}")
    assert find_schema_path({"ACP_SCHEMA_PATH": str(schema)}, tmp_path / "repo") == schema


def test_schema_path_then_uses_the_shared_snapshot_beside_the_repo(tmp_path: Path) -> None:
    shared = tmp_path / "shared" / "acp-schema" / "v1" / "schema.json"
    shared.parent.mkdir(parents=True)
    shared.write_text("{}")

    def fetch(cache_dir: Path) -> Path:
        raise AssertionError("npm must not be needed")

    assert find_schema_path({}, tmp_path / "repo", fetch=fetch) == shared


def test_schema_path_falls_back_to_the_npm_cache(tmp_path: Path) -> None:
    fetched: list[Path] = []

    def fetch(cache_dir: Path) -> Path:
        fetched.append(cache_dir)
        return cache_dir / "schema.json"

    assert find_schema_path({}, tmp_path / "repo", fetch=fetch) == tmp_path / "repo/.cache/acp-schema/schema.json"
    assert fetched == [tmp_path / "repo" / ".cache" / "acp-schema"]


def test_npm_fetch_reuses_its_cache_without_running_npm(tmp_path: Path) -> None:
    cached = tmp_path / "agentclientprotocol-sdk-2.4.0-v1-schema.json"
    cached.write_text("{}")
    assert fetch_from_npm(tmp_path) == cached


def test_schema_path_fails_clearly_when_nothing_works(tmp_path: Path) -> None:
    def fetch(cache_dir: Path) -> Path:
        raise OSError("npm: command not found")

    with pytest.raises(SchemaUnavailableError, match="ACP_SCHEMA_PATH"):
        find_schema_path({}, tmp_path / "repo", fetch=fetch)
