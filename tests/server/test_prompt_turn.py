"""One prompt turn, driven by the official SDK client: initialize, session/new, prompt."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import PROTOCOL_VERSION, embedded_text_resource, resource_block, resource_link_block, text_block

from coder_agent.config.settings import Settings
from coder_agent.scripted.script import FinishStep, Reply, TextStep, UsageStep
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.driving import initialize, request, texts, updates
from tests.support.inproc import inproc_agent, inproc_raw

pytestmark = pytest.mark.anyio

MISSING = "sess_that_does_not_exist"


def probes(workspace: Path) -> dict[str, tuple[str, dict[str, Any]]]:
    """capability path in `agentCapabilities` -> a call that reaches the method it gates."""
    cwd = str(workspace)
    return {
        "loadSession": ("session/load", {"sessionId": MISSING, "cwd": cwd, "mcpServers": []}),
        "sessionCapabilities.list": ("session/list", {}),
        "sessionCapabilities.resume": ("session/resume", {"sessionId": MISSING, "cwd": cwd, "mcpServers": []}),
        "sessionCapabilities.close": ("session/close", {"sessionId": MISSING}),
        "sessionCapabilities.delete": ("session/delete", {"sessionId": MISSING}),
        "sessionCapabilities.fork": ("session/fork", {"sessionId": MISSING, "cwd": cwd, "mcpServers": []}),
        "auth.logout": ("logout", {}),
    }


def advertised(capabilities: dict[str, Any], path: str) -> bool:
    """A bool capability is on when true; an object marker when present and not null."""
    value: Any = capabilities
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value is True or isinstance(value, dict)


def user_and_assistant_turns(messages: list[dict[str, object]]) -> list[tuple[object, object]]:
    """(role, content) of every message after the system prompt."""
    assert messages[0]["role"] == "system"
    return [(m["role"], m["content"]) for m in messages[1:]]


def finishing(text: str, finish_reason: str) -> Reply:
    return Reply(steps=[TextStep(pieces=[text]), FinishStep(finish_reason=finish_reason), UsageStep()])


async def test_initialize_names_the_agent_speaks_v1_and_offers_the_saved_login_without_terminal_auth(
    settings: Settings, workspace: Path
) -> None:
    async with inproc_agent(settings) as agent:
        with anyio.fail_after(10):
            init = await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
    assert init.protocol_version == 1
    # no clientCapabilities.auth.terminal: no terminal login (tests/e2e/test_terminal_login.py has the other case)
    assert [method.id for method in init.auth_methods] == ["saved-login"]
    assert init.agent_info is not None and init.agent_info.name == "coder-agent" and init.agent_info.version
    assert init.agent_capabilities is not None
    assert init.agent_capabilities.prompt_capabilities.embedded_context  # the resource blocks test relies on it


async def test_every_advertised_capability_works_and_every_other_gated_method_is_not_found(
    make_settings: Any, workspace: Path
) -> None:
    answers: dict[str, tuple[bool, Any]] = {}
    async with inproc_raw(make_settings(model=None)) as raw:
        await raw.send_json(initialize(0))
        capabilities = (await raw.read_message())["result"]["agentCapabilities"]
        for n, (path, (method, params)) in enumerate(probes(workspace).items(), start=1):
            await raw.send_json(request(n, method, params))
            reply = await raw.read_message()
            assert reply["id"] == n, reply
            answers[path] = (advertised(capabilities, path), reply.get("error", {}).get("code"))
        if advertised(capabilities, "sessionCapabilities.additionalDirectories"):
            roots = {"cwd": str(workspace), "mcpServers": [], "additionalDirectories": [str(workspace.parent)]}
            await raw.send_json(request("roots", "session/new", roots))
            assert "result" in await raw.read_message()
    wrong = {path: code for path, (on, code) in answers.items() if on == (code == -32601)}
    assert wrong == {}, f"advertised but not found, or not advertised but served: {answers}"


async def test_a_newer_protocol_version_from_the_client_is_answered_with_1(settings: Settings, workspace: Path) -> None:
    async with inproc_agent(settings, stdio=True) as agent:
        with anyio.fail_after(10):
            first = await agent.conn.initialize(protocol_version=2)  # answered by the early reader
            again = await agent.conn.initialize(protocol_version=99)  # answered by the full connection
    assert first.protocol_version == 1
    assert again.protocol_version == 1
    assert first == again


async def test_the_reply_streams_as_ordered_chunks_of_one_message_and_reasoning_as_thoughts(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    srv.enqueue(Reply.thinking_then_text(["Let me ", "think."], ["Hello ", "there, ", "world"]))
    async with inproc_agent(settings) as agent:
        with anyio.fail_after(30):
            await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
            session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
            done = await agent.conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
    assert done.stop_reason == "end_turn"
    chunks = updates(agent, session.session_id, "agent_message_chunk")
    thoughts = updates(agent, session.session_id, "agent_thought_chunk")
    assert texts(chunks) == ["Hello ", "there, ", "world"]
    assert texts(thoughts) == ["Let me ", "think."]
    [message_id] = {chunk.get("messageId") for chunk in chunks}
    [thought_id] = {thought.get("messageId") for thought in thoughts}
    assert message_id and thought_id and message_id != thought_id
    # Every chunk of the turn went out before the prompt's response (request id 2).
    response_at = next(i for i, m in enumerate(agent.messages) if m.get("id") == 2 and "result" in m)
    last_chunk_at = max(
        i
        for i, m in enumerate(agent.messages)
        if m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"] in ("agent_message_chunk", "agent_thought_chunk")
    )
    assert last_chunk_at < response_at
    assert agent.client.agent_text(session.session_id) == "Hello there, world"


async def test_a_second_prompt_sends_the_first_exchange_back_to_the_model(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    srv.enqueue(Reply.text("Hello ", "world"), Reply.text("Again"))
    async with inproc_agent(settings) as agent:
        with anyio.fail_after(30):
            await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
            session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
            await agent.conn.prompt(session_id=session.session_id, prompt=[text_block("first question")])
            second = await agent.conn.prompt(session_id=session.session_id, prompt=[text_block("second question")])
    assert second.stop_reason == "end_turn"
    first_request, second_request = (r.body["messages"] for r in srv.requests)
    assert user_and_assistant_turns(first_request) == [("user", "first question")]
    assert user_and_assistant_turns(second_request) == [
        ("user", "first question"),
        ("assistant", "Hello world"),
        ("user", "second question"),
    ]
    assert str(workspace) in second_request[0]["content"]  # the system prompt knows the session's cwd


async def test_text_embedded_resource_and_linked_file_blocks_all_reach_the_model(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    linked = workspace / "notes file.txt"  # a space, so the file:// URI is percent-encoded
    linked.write_text("LINKED FILE BODY\nsecond line\n", encoding="utf-8")
    embedded_uri = (workspace / "main.py").as_uri()
    prompt = [
        text_block("Please look at these."),
        resource_block(embedded_text_resource(embedded_uri, "print('EMBEDDED BODY')", mime_type="text/x-python")),
        resource_link_block("notes file.txt", linked.as_uri(), mime_type="text/plain"),
    ]
    srv.enqueue(Reply.text("Seen."))
    async with inproc_agent(settings) as agent:
        with anyio.fail_after(30):
            await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
            session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
            done = await agent.conn.prompt(session_id=session.session_id, prompt=prompt)
    assert done.stop_reason == "end_turn"
    user = srv.requests[0].body["messages"][-1]
    assert user["role"] == "user"
    content = user["content"] if isinstance(user["content"], str) else str(user["content"])
    positions = [content.find(s) for s in ("Please look at these.", "EMBEDDED BODY", "LINKED FILE BODY\nsecond line")]
    assert -1 not in positions, content
    assert positions == sorted(positions), "the blocks reach the model in prompt order"
    assert embedded_uri in content


async def test_finish_reasons_length_and_content_filter_become_max_tokens_and_refusal(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    srv.enqueue(finishing("cut short", "length"), finishing("no", "content_filter"), Reply.text("fine"))
    async with inproc_agent(settings) as agent:
        with anyio.fail_after(30):
            await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
            session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
            stop_reasons = [
                (await agent.conn.prompt(session_id=session.session_id, prompt=[text_block(text)])).stop_reason
                for text in ("write a lot", "write something bad", "write something good")
            ]
    assert stop_reasons == ["max_tokens", "refusal", "end_turn"]


async def test_a_refused_prompt_is_left_out_of_the_next_model_request(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    srv.enqueue(Reply.text("Hi"), finishing("I can't", "content_filter"), Reply.text("fine"))
    async with inproc_agent(settings) as agent:
        with anyio.fail_after(30):
            await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
            session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
            for text in ("hello", "something refused", "something fine"):
                await agent.conn.prompt(session_id=session.session_id, prompt=[text_block(text)])
    assert user_and_assistant_turns(srv.requests[2].body["messages"]) == [
        ("user", "hello"),
        ("assistant", "Hi"),
        ("user", "something fine"),
    ]
