"""Text that is not Unicode (lone surrogates, bytes that are not UTF-8) is refused, never fatal.

A lone surrogate (`"\\ud800"`) is valid JSON; anything echoing it used to kill the process, and with it every
session in it. Each case below must get an error naming the problem, and the agent must go on answering.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from coder_agent.config.settings import Settings
from coder_agent.scripted.server import ScriptedModelServer
from coder_agent.store.base import SessionRecord
from coder_agent.store.sqlite import SqliteSessionStore
from tests.support.inproc import InprocRaw, inproc_raw

pytestmark = pytest.mark.anyio

LONE = "\\ud800"  # as it appears inside JSON text: one escape, no partner
INVALID_PARAMS = -32602


def raw_request(request_id: Any, method: str, params: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()


def with_lone_surrogate(message: bytes, marker: str = "MARK") -> bytes:
    """`message` with the text `marker` replaced by a lone surrogate escape."""
    return message.replace(marker.encode(), LONE.encode())


async def handshake(raw: InprocRaw, cwd: Path) -> str:
    await raw.send_json({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {"protocolVersion": 1}})
    await raw.read_reply("init")
    await raw.send_json(
        {"jsonrpc": "2.0", "id": "new", "method": "session/new", "params": {"cwd": str(cwd), "mcpServers": []}}
    )
    reply = await raw.read_reply("new")
    return str(reply["result"]["sessionId"])


async def still_alive(raw: InprocRaw, cwd: Path) -> None:
    await raw.send_json({"jsonrpc": "2.0", "id": "alive", "method": "session/list", "params": {"cwd": str(cwd)}})
    reply = await raw.read_reply("alive")
    assert "result" in reply, reply


def cases(cwd: str, session_id: str) -> dict[str, tuple[bytes, int]]:
    """name -> (the line to send, the error code it must get)."""
    prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "MARK"}]}
    link = {"sessionId": session_id, "prompt": [{"type": "resource_link", "uri": "file:///tmp/MARK", "name": "x"}]}
    embedded = {
        "sessionId": session_id,
        "prompt": [{"type": "resource", "resource": {"uri": "file:///tmp/x.txt", "text": "MARK"}}],
    }
    load = {"sessionId": "sess_MARK", "cwd": cwd, "mcpServers": []}
    return {
        "cwd": (with_lone_surrogate(raw_request(1, "session/new", {"cwd": cwd + "/MARK", "mcpServers": []})), -32602),
        "additionalDirectories": (
            with_lone_surrogate(
                raw_request(2, "session/new", {"cwd": cwd, "mcpServers": [], "additionalDirectories": ["/MARK"]})
            ),
            INVALID_PARAMS,
        ),
        "prompt sessionId": (
            with_lone_surrogate(raw_request(3, "session/prompt", {**prompt, "sessionId": "sess_MARK"})),
            INVALID_PARAMS,
        ),
        "prompt text": (with_lone_surrogate(raw_request(4, "session/prompt", prompt)), INVALID_PARAMS),
        "resource_link uri": (with_lone_surrogate(raw_request(5, "session/prompt", link)), INVALID_PARAMS),
        "embedded text": (with_lone_surrogate(raw_request(6, "session/prompt", embedded)), INVALID_PARAMS),
        "load sessionId": (with_lone_surrogate(raw_request(7, "session/load", load)), INVALID_PARAMS),
        "resume sessionId": (with_lone_surrogate(raw_request(8, "session/resume", load)), INVALID_PARAMS),
        "fork sessionId": (with_lone_surrogate(raw_request(9, "session/fork", load)), INVALID_PARAMS),
        "delete sessionId": (
            with_lone_surrogate(raw_request(10, "session/delete", {"sessionId": "sess_MARK"})),
            INVALID_PARAMS,
        ),
        "set_mode sessionId": (
            with_lone_surrogate(raw_request(11, "session/set_mode", {"sessionId": "sess_MARK", "modeId": "ask"})),
            INVALID_PARAMS,
        ),
        "set_config_option value": (
            with_lone_surrogate(
                raw_request(
                    12, "session/set_config_option", {"sessionId": session_id, "configId": "mode", "value": "MARK"}
                )
            ),
            INVALID_PARAMS,
        ),
        "raw invalid UTF-8 in a prompt": (
            raw_request(13, "session/prompt", prompt).replace(b"MARK", b"\xff\xfe"),
            INVALID_PARAMS,
        ),
        "method name": (with_lone_surrogate(raw_request(14, "session/MARK", {})), -32601),
    }


async def test_each_place_with_invalid_unicode_gets_invalid_params_and_the_agent_lives_on(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    async with inproc_raw(settings) as raw:
        session_id = await handshake(raw, workspace)
        for name, (line, code) in cases(str(workspace), session_id).items():
            await raw.send_bytes(line + b"\n")
            request_id = json.loads(line.decode("utf-8", "replace"))["id"]
            reply = await raw.read_reply(request_id)
            assert reply.get("error", {}).get("code") == code, (name, reply)
            if code == INVALID_PARAMS:
                assert "Unicode" in reply["error"]["message"], (name, reply)
            await still_alive(raw, workspace)
        listed = await _list(raw, workspace)
        assert [s["sessionId"] for s in listed] == [session_id]  # nothing bad was saved


async def test_a_lone_surrogate_request_id_gets_an_invalid_request_and_the_agent_lives_on(
    settings: Settings, workspace: Path
) -> None:
    async with inproc_raw(settings) as raw:
        await handshake(raw, workspace)
        await raw.send_bytes(with_lone_surrogate(raw_request("id-MARK", "session/list", {})) + b"\n")
        reply = await raw.read_message()
        assert reply["id"] is None and reply["error"]["code"] == -32600, reply
        await still_alive(raw, workspace)


async def _list(raw: InprocRaw, cwd: Path) -> list[dict[str, Any]]:
    await raw.send_json({"jsonrpc": "2.0", "id": "list", "method": "session/list", "params": {"cwd": str(cwd)}})
    reply = await raw.read_reply("list")
    return list(reply["result"]["sessions"])


async def test_a_stored_session_with_a_lone_surrogate_is_listed_without_killing_the_agent(
    settings: Settings, workspace: Path
) -> None:
    """Written by an older version, which saved the directories it was sent (JSON escapes): list must survive it."""
    store = SqliteSessionStore(settings.home / "sessions.db")
    store.create(
        SessionRecord(
            id="sess_old",
            cwd=str(workspace),
            additional_directories=["/tmp/\ud800"],
            title="old",
            created_at="2026-01-01T00:00:00.000Z",
            updated_at="2026-01-01T00:00:00.000Z",
            mode="default",
            model=None,
            thought_level=None,
            state={},
            parent_id=None,
        )
    )
    store.close()
    async with inproc_raw(settings) as raw:
        await handshake(raw, workspace)
        listed = await _list(raw, workspace)
        old = next(s for s in listed if s["sessionId"] == "sess_old")
        assert old["additionalDirectories"] == ["/tmp/\ufffd"]
        await still_alive(raw, workspace)


def templates(cwd: str, session_id: str) -> list[dict[str, Any]]:
    """A valid request of each method a client may send, with every field a string can go in."""
    roots = {"cwd": cwd, "mcpServers": [{"name": "s", "command": "/bin/true", "args": ["a"], "env": []}]}
    block = {"type": "text", "text": "hi"}
    link = {"type": "resource_link", "uri": "file:///tmp/a", "name": "a", "mimeType": "text/plain", "title": "t"}
    embedded = {"type": "resource", "resource": {"uri": "file:///tmp/b", "text": "b", "mimeType": "text/plain"}}
    return [
        {"method": "initialize", "params": {"protocolVersion": 1, "clientInfo": {"name": "c", "version": "1"}}},
        {"method": "session/new", "params": {**roots, "additionalDirectories": [cwd]}},
        {"method": "session/load", "params": {"sessionId": session_id, **roots}},
        {"method": "session/resume", "params": {"sessionId": session_id, **roots}},
        {"method": "session/fork", "params": {"sessionId": session_id, **roots}},
        {"method": "session/list", "params": {"cwd": cwd, "cursor": "c"}},
        {"method": "session/prompt", "params": {"sessionId": session_id, "prompt": [block, link, embedded]}},
        {"method": "session/set_mode", "params": {"sessionId": session_id, "modeId": "ask"}},
        {
            "method": "session/set_config_option",
            "params": {"sessionId": session_id, "configId": "mode", "value": "ask"},
        },
        {"method": "session/close", "params": {"sessionId": "sess_none"}},
        {"method": "session/delete", "params": {"sessionId": "sess_none"}},
    ]


def string_leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, str):
        return [path]
    if isinstance(value, dict):
        return [leaf for key, item in value.items() for leaf in string_leaves(item, (*path, key))]
    if isinstance(value, list):
        return [leaf for index, item in enumerate(value) for leaf in string_leaves(item, (*path, index))]
    return []


def replaced(value: Any, path: tuple[Any, ...], new: str) -> Any:
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = replaced(value[path[0]], path[1:], new)
    return copy


async def test_a_lone_surrogate_in_any_string_of_any_request_is_refused_and_harmless(
    settings: Settings, workspace: Path
) -> None:
    """Systematic fuzzing of the class: every string field of every method, one at a time."""
    sent = 0
    async with inproc_raw(settings) as raw:
        session_id = await handshake(raw, workspace)
        for template in templates(str(workspace), session_id):
            for leaf in string_leaves(template):
                request_id = f"fuzz-{sent}"
                bad = replaced(template, leaf, "x\ud800y")
                line = json.dumps({"jsonrpc": "2.0", "id": request_id, **bad}).encode()
                assert b"\\ud800" in line
                await raw.send_bytes(line + b"\n")
                reply = await raw.read_reply(request_id)
                assert reply.get("error", {}).get("code") in (-32602, -32601, -32600), (leaf, reply)
                sent += 1
        await still_alive(raw, workspace)
    assert sent > 30


async def test_a_model_reply_with_a_lone_surrogate_is_shown_scrubbed_and_kept(
    settings: Settings, srv: ScriptedModelServer, workspace: Path
) -> None:
    """Providers can send broken escapes too: the turn must not die of them, nor the stored session."""
    from coder_agent.scripted.script import Reply

    srv.enqueue(Reply.text("bro", "ken \ud800 text"), Reply.text("fine"))
    async with inproc_raw(settings) as raw:
        session_id = await handshake(raw, workspace)
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
        for n in (1, 2):
            await raw.send_json({"jsonrpc": "2.0", "id": f"p{n}", "method": "session/prompt", "params": prompt})
            reply = await raw.read_reply(f"p{n}", timeout=30)
            assert reply.get("result", {}).get("stopReason") == "end_turn", reply
        chunks = [
            m["params"]["update"]["content"]["text"]
            for m in raw.messages
            if m.get("method") == "session/update" and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
        ]
        assert "ken \ufffd text" in chunks
    history = srv.requests[-1].body["messages"]
    assert any(m["role"] == "assistant" and "ken" in (m.get("content") or "") for m in history)
