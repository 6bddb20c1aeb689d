"""Logging in over ACP: the methods offered in `initialize`, `authenticate`, `logout`, and -32000 on a prompt
without a model or without its key (so that the client offers the login)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, text_block
from acp.schema import AuthCapabilities, ClientCapabilities

from coder_agent.config.keystore import KeyStore
from coder_agent.config.settings import Settings
from coder_agent.prestart.capabilities import initialize_result
from coder_agent.prestart.early import answer_initialize
from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.inproc import inproc_agent, inproc_raw

pytestmark = pytest.mark.anyio

ANTHROPIC_KEY = "sk-ant-saved-by-login-0123456789"


def load(user: Path, **extra: str) -> Settings:
    """Settings as `coder-agent acp` loads them, from an environment of the test's own (not the process's)."""
    environ = {"HOME": str(user), "CODER_AGENT_HOME": str(user / "data"), "CODER_AGENT_MAX_RETRIES": "0", **extra}
    return Settings.load(environ, lenient=True)


def config_folder(user: Path) -> Path:
    return user / ".config" / "coder-agent"


def logged_in(user: Path, model: str, key_variable: str, key: str, **config: str) -> None:
    """What `coder-agent login` leaves behind: the key saved, the model (and maybe a server) in config.toml."""
    KeyStore(config_folder(user)).save(key_variable, key, where="file")
    lines = [f'model = "{model}"', *(f'{name} = "{value}"' for name, value in config.items())]
    (config_folder(user) / "config.toml").write_text("\n".join(lines) + "\n")


def method_types(result: dict[str, Any]) -> dict[str, str]:
    return {method["id"]: method.get("type", "agent") for method in result["authMethods"]}


def test_the_terminal_login_is_offered_only_to_clients_that_opted_in() -> None:
    plain = initialize_result({"fs": {"readTextFile": True}})
    opted_in = initialize_result({"auth": {"terminal": True}})
    assert method_types(plain) == {"saved-login": "agent"}
    assert method_types(opted_in) == {"terminal-login": "terminal", "saved-login": "agent"}
    [terminal] = [method for method in opted_in["authMethods"] if method.get("type") == "terminal"]
    assert terminal["args"] == ["login"]
    assert opted_in["agentCapabilities"]["auth"] == {"logout": {}}
    assert method_types(initialize_result({"auth": {"terminal": "yes"}})) == {"saved-login": "agent"}


def test_the_terminal_login_is_offered_for_the_older_meta_flag_too_with_the_command_to_run() -> None:
    """The ACP registry's own check (and Zed before `auth.terminal`) sends `_meta["terminal-auth"]`; such a client
    runs the command the method's `_meta["terminal-auth"]` names."""
    offered = initialize_result({"_meta": {"terminal-auth": True}, "terminal": True})
    assert method_types(offered) == {"terminal-login": "terminal", "saved-login": "agent"}
    [terminal] = [method for method in offered["authMethods"] if method.get("type") == "terminal"]
    legacy = terminal["_meta"]["terminal-auth"]
    assert legacy["args"] == ["-m", "coder_agent", "login"] and legacy["label"]
    assert os.access(legacy["command"], os.X_OK)
    standard = initialize_result({"auth": {"terminal": True}})
    assert "_meta" not in next(m for m in standard["authMethods"] if m.get("type") == "terminal")


def test_the_early_answer_reads_the_clients_auth_capability() -> None:
    request = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {"auth": {"terminal": True}}},
    }
    read_in, write_in = os.pipe()
    read_out, write_out = os.pipe()
    try:
        os.write(write_in, json.dumps(request).encode() + b"\n")
        answer_initialize(read_in, write_out, initialize_result)
        reply = json.loads(os.read(read_out, 65536))
    finally:
        for fd in (read_in, write_in, read_out, write_out):
            os.close(fd)
    assert method_types(reply["result"]) == {"terminal-login": "terminal", "saved-login": "agent"}


async def test_initialize_over_acp_offers_the_terminal_login_to_a_client_that_can_run_it(tmp_path: Path) -> None:
    async with inproc_agent(load(tmp_path)) as agent:
        capabilities = ClientCapabilities(auth=AuthCapabilities(terminal=True))
        init = await agent.conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities)
    assert [method.id for method in init.auth_methods] == ["terminal-login", "saved-login"]


async def test_a_prompt_without_a_model_asks_for_a_login(tmp_path: Path) -> None:
    async with inproc_agent(load(tmp_path)) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        new = await agent.conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        with pytest.raises(RequestError) as refused:
            await agent.conn.prompt(session_id=new.session_id, prompt=[text_block("hi")])
    assert refused.value.code == -32000
    assert "coder-agent login" in str(refused.value) and "CODER_AGENT_MODEL" in str(refused.value)


async def test_a_prompt_to_a_provider_without_its_key_asks_for_a_login(tmp_path: Path) -> None:
    settings = load(tmp_path, CODER_AGENT_MODEL="anthropic/claude-sonnet-4-5")
    async with inproc_agent(settings) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        new = await agent.conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        with pytest.raises(RequestError) as refused:
            await agent.conn.prompt(session_id=new.session_id, prompt=[text_block("hi")])
    assert refused.value.code == -32000
    assert "ANTHROPIC_API_KEY" in str(refused.value)


async def test_a_local_server_named_by_api_base_needs_no_key(tmp_path: Path, srv: ScriptedModelServer) -> None:
    srv.enqueue(Reply.text("Hello."))
    settings = load(tmp_path, CODER_AGENT_MODEL="openai/scripted", CODER_AGENT_API_BASE=srv.url)
    async with inproc_agent(settings) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        new = await agent.conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        done = await agent.conn.prompt(session_id=new.session_id, prompt=[text_block("hi")])
    assert done.stop_reason == "end_turn"


async def test_authenticate_takes_a_login_made_meanwhile_and_the_open_session_uses_it(
    tmp_path: Path, srv: ScriptedModelServer
) -> None:
    srv.enqueue(Reply.text("Hello."))
    key = "sk-openai-saved-0123456789"
    async with inproc_agent(load(tmp_path)) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        new = await agent.conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        with pytest.raises(RequestError) as not_yet:
            await agent.conn.authenticate(method_id="saved-login")
        assert not_yet.value.code == -32000
        logged_in(tmp_path, "openai/scripted", "OPENAI_API_KEY", key, api_base=srv.url)  # `coder-agent login`
        await agent.conn.authenticate(method_id="saved-login")
        done = await agent.conn.prompt(session_id=new.session_id, prompt=[text_block("hi")])
    assert done.stop_reason == "end_turn"
    assert [request.headers["authorization"] for request in srv.requests] == [f"Bearer {key}"]


async def test_a_login_made_in_another_terminal_is_found_by_the_next_prompt_without_a_restart(
    tmp_path: Path, srv: ScriptedModelServer
) -> None:
    """The editor knows nothing of a `coder-agent login` the user ran in a shell: the next prompt finds it."""
    srv.enqueue(Reply.text("Hello."))
    key = "sk-openai-saved-0123456789"
    async with inproc_agent(load(tmp_path)) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        new = await agent.conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        with pytest.raises(RequestError) as not_yet:
            await agent.conn.prompt(session_id=new.session_id, prompt=[text_block("hi")])
        logged_in(tmp_path, "openai/scripted", "OPENAI_API_KEY", key, api_base=srv.url)  # in another terminal
        done = await agent.conn.prompt(session_id=new.session_id, prompt=[text_block("hi")])
    assert not_yet.value.code == -32000
    assert done.stop_reason == "end_turn"
    assert [request.headers["authorization"] for request in srv.requests] == [f"Bearer {key}"]


async def test_the_terminal_method_and_unknown_methods_are_not_authenticated(tmp_path: Path) -> None:
    async with inproc_raw(load(tmp_path)) as raw:
        for number, method in enumerate(["terminal-login", "no-such-method"], 1):
            await raw.send_json(
                {"jsonrpc": "2.0", "id": number, "method": "authenticate", "params": {"methodId": method}}
            )
            reply = await raw.read_reply(number)
            assert reply["error"]["code"] == -32602 and method in reply["error"]["message"]


async def test_logout_forgets_the_saved_key_and_the_next_prompt_asks_for_a_login(tmp_path: Path) -> None:
    logged_in(tmp_path, "anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    settings = load(tmp_path)
    assert settings.environ["ANTHROPIC_API_KEY"] == ANTHROPIC_KEY
    async with inproc_raw(settings) as raw:
        await raw.send_json({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
        await raw.read_reply(1)
        await raw.send_json(
            {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(tmp_path), "mcpServers": []}}
        )
        session_id = (await raw.read_reply(2))["result"]["sessionId"]
        await raw.send_json({"jsonrpc": "2.0", "id": 3, "method": "logout", "params": {}})
        assert (await raw.read_reply(3))["result"] == {}
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
        await raw.send_json({"jsonrpc": "2.0", "id": 4, "method": "session/prompt", "params": prompt})
        refused = await raw.read_reply(4)
    assert refused["error"]["code"] == -32000 and "ANTHROPIC_API_KEY" in refused["error"]["message"]
    assert "ANTHROPIC_API_KEY" not in settings.environ
    assert ANTHROPIC_KEY not in (config_folder(tmp_path) / "credentials.toml").read_text()
    assert KeyStore(config_folder(tmp_path)).names() == []
