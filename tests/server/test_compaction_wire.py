"""On the wire: `compaction_update` only for a client that advertised the unstable `session.compaction` (checked
against v1's unstable schema there), the stable `tool_call` form for everyone else and in the replay."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from coder_agent.scripted.server import ScriptedModelServer
from coder_agent.scripted.worker import WorkerModel
from evals.harness.acp_schema import AgentMessageValidator, compile_schema, find_unstable_schema_path
from tests.support.inproc import InprocRaw, inproc_raw
from tests.support.inproc import test_settings as agent_settings

pytestmark = pytest.mark.anyio

# Enough for a summary to free something: a summary of less is not kept (the conversation stays as it was).
NOTES = "".join(f"line {i}: the notes say nothing of importance here\n" for i in range(40))


async def request(raw: InprocRaw, request_id: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    await raw.send_json({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
    return await raw.read_reply(request_id, timeout=30)


async def compact_twice(raw: InprocRaw, workspace: Path, capabilities: dict[str, Any]) -> list[dict[str, Any]]:
    """A session of two tasks, compacted on demand; then loaded again. The session/update lines, in order."""
    await request(raw, "init", "initialize", {"protocolVersion": 1, "clientCapabilities": capabilities})
    new = await request(raw, "new", "session/new", {"cwd": str(workspace), "mcpServers": []})
    session_id = new["result"]["sessionId"]
    for n in (1, 2):
        prompt = [{"type": "text", "text": f"TASK {n}: read the notes."}]
        assert "result" in await request(raw, f"p{n}", "session/prompt", {"sessionId": session_id, "prompt": prompt})
    compact = [{"type": "text", "text": "/compact"}]
    assert "result" in await request(raw, "c", "session/prompt", {"sessionId": session_id, "prompt": compact})
    await request(raw, "load", "session/load", {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []})
    return [m["params"]["update"] for m in raw.messages if m.get("method") == "session/update"]


async def test_a_client_that_takes_compaction_updates_gets_them_and_the_replay_gets_the_stable_form(
    tmp_path: Path, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text(NOTES)
    worker = WorkerModel(str(workspace / "notes.txt"))
    with ScriptedModelServer(respond=worker) as server:
        settings = agent_settings(tmp_path / "home", server.url, default_mode="bypass")
        async with inproc_raw(settings) as raw:
            # This client advertised an unstable capability: what it is sent is checked against the unstable schema.
            raw.io.validator = AgentMessageValidator(compile_schema(str(find_unstable_schema_path())))
            updates = await compact_twice(raw, workspace, {"session": {"compaction": {}}})
    live = [u for u in updates if u["sessionUpdate"] == "compaction_update"]
    assert [u["status"] for u in live] == ["in_progress", "completed"]
    assert live[1]["summary"][1]["text"].startswith("Tasks handled so far: 1, 2")
    replayed = [u for u in updates if u.get("toolCallId", "").startswith("compact_")]
    assert [u["sessionUpdate"] for u in replayed] == ["tool_call", "tool_call_update"]  # only in the replay
    assert replayed[1]["status"] == "completed"


async def test_a_client_without_the_capability_never_gets_a_compaction_update(tmp_path: Path, workspace: Path) -> None:
    (workspace / "notes.txt").write_text(NOTES)
    with ScriptedModelServer(respond=WorkerModel(str(workspace / "notes.txt"))) as server:
        settings = agent_settings(tmp_path / "home", server.url, default_mode="bypass")
        async with inproc_raw(settings) as raw:  # checked against the stable schema, as every test is
            updates = await compact_twice(raw, workspace, {})
    assert not [u for u in updates if u["sessionUpdate"] == "compaction_update"]
    shown = [u for u in updates if u.get("toolCallId", "").startswith("compact_")]
    assert [(u["sessionUpdate"], u["status"]) for u in shown] == [
        ("tool_call", "in_progress"),
        ("tool_call_update", "completed"),
    ] * 2
