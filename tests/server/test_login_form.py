"""Logging in without a terminal: `authenticate` asks in a form tied to its request (provider, key or a local
server), saves the login as `coder-agent login` does, and the session then works; the key is never echoed,
logged or stored in a session."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, text_block

from coder_agent.config.keystore import KeyStore
from coder_agent.config.settings import Settings
from coder_agent.prestart.capabilities import initialize_result
from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.eliciting_client import Elicitation, ElicitingClient, accept_with, decline
from tests.support.inproc import InprocAgent, inproc_agent

pytestmark = pytest.mark.anyio

KEY = "sk-proj-typed-into-the-form-0123456789"


def load(user: Path, **extra: str) -> Settings:
    """Settings as `coder-agent acp` loads them, from an environment of the test's own (not the process's)."""
    environ = {"HOME": str(user), "CODER_AGENT_HOME": str(user / "data"), "CODER_AGENT_MAX_RETRIES": "0", **extra}
    return Settings.load(environ, lenient=True)


def config_folder(user: Path) -> Path:
    return user / ".config" / "coder-agent"


def method_ids(capabilities: dict[str, Any], **options: Any) -> list[str]:
    return [method["id"] for method in initialize_result(capabilities, image=False, **options)["authMethods"]]


def test_the_form_login_is_offered_first_to_clients_that_render_forms_and_cannot_run_a_terminal() -> None:
    assert method_ids({"elicitation": {"form": {}}}) == ["form-login", "saved-login"]
    assert method_ids({"elicitation": {"form": {}}, "auth": {"terminal": True}}) == ["terminal-login", "saved-login"]
    assert method_ids({"elicitation": {"url": {}}}) == ["saved-login"]
    assert method_ids({"elicitation": {"form": None}}) == ["saved-login"]
    assert method_ids({"elicitation": {"form": {}}}, logout=False) == ["saved-login"]  # a remote client's


async def logged_in_by_form(agent: InprocAgent, user: Path, method: str = "form-login") -> str:
    """initialize, authenticate with the form, then a prompt in a new session; the stop reason."""
    client = agent.client
    assert isinstance(client, ElicitingClient)
    await agent.conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=client.capabilities)
    await agent.conn.authenticate(method_id=method)
    new = await agent.conn.new_session(cwd=str(user), mcp_servers=[])
    return (await agent.conn.prompt(session_id=new.session_id, prompt=[text_block("hi")])).stop_reason


@pytest.mark.parametrize("stdio", [False, True])  # True: `initialize` answered early, as `coder-agent acp` does
async def test_the_form_asks_for_provider_and_key_saves_them_and_the_session_then_works(
    stdio: bool, tmp_path: Path, srv: ScriptedModelServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    srv.enqueue(Reply.text("Hello."))
    client = ElicitingClient(accept_with({"provider": "openai", "api_key": KEY, "model": "scripted"}), modes=["form"])
    async with inproc_agent(load(tmp_path, CODER_AGENT_API_BASE=srv.url), client, stdio=stdio) as agent:
        assert await logged_in_by_form(agent, tmp_path) == "end_turn"
    [request] = [m for m in agent.messages if m.get("method") == "elicitation/create"]
    [authenticate] = [m for _, m in agent.io.wire if m.get("method") == "authenticate"]
    params = request["params"]
    assert params["mode"] == "form" and params["requestId"] == authenticate["id"] and "sessionId" not in params
    schema = params["requestedSchema"]
    assert schema["required"] == ["provider"]
    assert {"anthropic", "openai", "ollama", "local"} <= {o["const"] for o in schema["properties"]["provider"]["oneOf"]}
    assert "default" not in schema["properties"]["api_key"]
    assert [r.headers["authorization"] for r in srv.requests] == [f"Bearer {KEY}"]
    assert KeyStore(config_folder(tmp_path)).load().keys == {"OPENAI_API_KEY": KEY}
    assert 'model = "openai/scripted"' in (config_folder(tmp_path) / "config.toml").read_text()
    written = b"".join(agent.io.validator.agent_lines).decode()
    assert KEY not in written and "[secret OPENAI_API_KEY]" not in written  # never echoed, not even masked
    assert caplog.records and all(KEY not in record.getMessage() for record in caplog.records)
    stored = b"".join(path.read_bytes() for path in (tmp_path / "data").glob("sessions.db*"))
    assert b"Hello." in stored and KEY.encode() not in stored


async def test_a_local_server_needs_no_key(tmp_path: Path, srv: ScriptedModelServer) -> None:
    srv.enqueue(Reply.text("Hello."))
    answer = {"provider": "local", "api_base": srv.url, "model": "scripted"}
    async with inproc_agent(load(tmp_path), ElicitingClient(accept_with(answer), modes=["form"])) as agent:
        assert await logged_in_by_form(agent, tmp_path) == "end_turn"
    config = (config_folder(tmp_path) / "config.toml").read_text()
    assert 'model = "openai/scripted"' in config and f'api_base = "{srv.url}"' in config
    assert KeyStore(config_folder(tmp_path)).names() == []


async def test_what_is_missing_is_asked_again_with_a_word_on_it(tmp_path: Path, srv: ScriptedModelServer) -> None:
    srv.enqueue(Reply.text("Hello."))
    answers = iter([{"provider": "anthropic"}, {"provider": "openai", "api_key": KEY, "model": "scripted"}])

    def answer(request: Elicitation) -> dict[str, Any]:
        return {"action": "accept", "content": next(answers)}

    client = ElicitingClient(answer, modes=["form"])
    async with inproc_agent(load(tmp_path, CODER_AGENT_API_BASE=srv.url), client) as agent:
        assert await logged_in_by_form(agent, tmp_path) == "end_turn"
    first, second = client.elicitations
    assert "Not saved" not in first.message
    assert "Not saved: Anthropic needs its API key (ANTHROPIC_API_KEY)." in second.message


@pytest.mark.parametrize(
    ("policy", "said"),
    [
        (decline, "The login was declined: nothing was saved."),
        (accept_with({"provider": "nobody"}), "No login was saved: the answer did not fit the form"),
        (accept_with({"provider": "ollama", "api_base": "ftp://x"}), "must be an http(s) URL"),
    ],
)
async def test_a_declined_or_unusable_login_saves_nothing_and_says_why(policy: Any, said: str, tmp_path: Path) -> None:
    client = ElicitingClient(policy, modes=["form"])
    async with inproc_agent(load(tmp_path), client) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=client.capabilities)
        with pytest.raises(RequestError) as refused:
            await agent.conn.authenticate(method_id="form-login")
    assert refused.value.code == -32000 and said in str(refused.value)
    assert not (config_folder(tmp_path) / "config.toml").exists()
    assert len(client.elicitations) == (1 if policy is decline else 3)


async def test_the_saved_login_asks_in_the_form_when_nothing_usable_is_saved(
    tmp_path: Path, srv: ScriptedModelServer
) -> None:
    srv.enqueue(Reply.text("Hello."))
    answer = {"provider": "local", "api_base": srv.url, "model": "scripted"}
    client = ElicitingClient(accept_with(answer), modes=["form"])
    async with inproc_agent(load(tmp_path), client) as agent:
        assert await logged_in_by_form(agent, tmp_path, method="saved-login") == "end_turn"
    assert len(client.elicitations) == 1


async def test_the_form_login_needs_a_client_that_renders_forms(tmp_path: Path) -> None:
    client = ElicitingClient(decline, modes=["url"])
    async with inproc_agent(load(tmp_path), client) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=client.capabilities)
        with pytest.raises(RequestError) as refused:
            await agent.conn.authenticate(method_id="form-login")
    assert refused.value.code == -32602 and "elicitation.form" in str(refused.value)
    assert client.elicitations == []


def test_the_key_field_is_marked_secret_for_clients_that_read_it() -> None:
    from coder_agent.server.login_form import login_form

    assert json.loads(json.dumps(login_form().wire()))["properties"]["api_key"]["_meta"] == {
        "coder-agent": {"secret": True}
    }
