"""No access to `/acp` without the bearer token, over either transport; browsers only from allowed origins."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from coder_agent.config.keystore import KeyStore
from coder_agent.config.settings import Settings
from coder_agent.remote.security import Gate, is_loopback
from tests.support.remote_server import http_client, remote_server

pytestmark = pytest.mark.anyio

INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
JSON = {"content-type": "application/json"}


async def test_every_request_to_acp_needs_the_token_and_health_needs_none(settings: Settings) -> None:
    async with remote_server(settings) as running, http_client(running) as http:
        without = await http.post(running.url, content=INITIALIZE, headers={**JSON, "authorization": ""})
        wrong = await http.post(running.url, content=INITIALIZE, headers={**JSON, "authorization": "Bearer nope"})
        basic = await http.post(running.url, content=INITIALIZE, headers={**JSON, "authorization": "Basic x"})
        lower = await http.post(
            running.url, content=INITIALIZE, headers={**JSON, "authorization": f"bearer {running.token}"}
        )
        sse = await http.get(running.url, headers={"accept": "text/event-stream", "authorization": ""})
        delete = await http.delete(running.url, headers={"acp-connection-id": "x", "authorization": ""})
        health = await http.get(running.url.replace("/acp", "/health"), headers={"authorization": ""})
        with pytest.raises(InvalidStatus) as refused:
            await connect(running.ws_url)
        assert refused.value.response.status_code == 401
        accepted = await connect(running.ws_url, additional_headers=running.auth)
        await accepted.send(INITIALIZE)
        answer = json.loads(await accepted.recv())
        await accepted.close()
    assert [without.status_code, wrong.status_code, basic.status_code] == [401, 401, 401]
    assert lower.status_code == 200
    assert [sse.status_code, delete.status_code] == [401, 401]
    assert health.status_code == 200 and health.json() == {"status": "ok"}
    assert answer["result"]["protocolVersion"] == 1
    assert len(running.connections) == 2  # the refused requests opened nothing


async def test_browsers_connect_only_from_the_servers_own_origin_or_an_allowed_one(settings: Settings) -> None:
    async with remote_server(settings, origins=("https://ide.example.com",)) as running, http_client(running) as http:
        own = f"http://127.0.0.1:{running.port}"
        statuses = {}
        for origin in (
            own,
            "https://ide.example.com",
            "https://evil.example.com",
            "null",
            f"http://localhost:{running.port}",
        ):
            try:
                socket = await connect(running.ws_url, additional_headers=running.auth, origin=origin)
                await socket.close()
                statuses[origin] = 101
            except InvalidStatus as exc:
                statuses[origin] = exc.response.status_code
        post = await http.post(running.url, content=INITIALIZE, headers={**JSON, "origin": "https://evil.example.com"})
        allowed = await http.post(
            running.url, content=INITIALIZE, headers={**JSON, "origin": "https://ide.example.com"}
        )
        preflight = await http.options(
            running.url,
            headers={"origin": "https://ide.example.com", "access-control-request-method": "POST", "authorization": ""},
        )
        refused_preflight = await http.options(
            running.url, headers={"origin": "https://evil.example.com", "authorization": ""}
        )
    assert statuses == {
        own: 101,
        "https://ide.example.com": 101,
        "https://evil.example.com": 403,
        "null": 403,
        f"http://localhost:{running.port}": 403,  # reached as 127.0.0.1: another origin to a browser
    }
    assert post.status_code == 403
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "https://ide.example.com"
    assert "acp-connection-id" in allowed.headers["access-control-expose-headers"].lower()
    assert preflight.status_code == 204
    assert "authorization" in preflight.headers["access-control-allow-headers"]
    assert refused_preflight.status_code == 403


def test_the_gate_compares_the_whole_token_and_only_bearer_tokens() -> None:
    gate = Gate("s3cret-token", [])
    assert gate.check({"authorization": "Bearer s3cret-token"}) is None
    assert gate.check({"authorization": "Bearer  s3cret-token "}) is None
    for value in ("Bearer s3cret-toke", "Bearer s3cret-token2", "Bearer", "s3cret-token", "Token s3cret-token", ""):
        denied = gate.check({"authorization": value})
        assert denied is not None and denied.status == 401


def test_loopback_addresses_are_recognised() -> None:
    assert all(is_loopback(host) for host in ("127.0.0.1", "127.3.2.1", "::1", "[::1]", "localhost"))
    assert not any(is_loopback(host) for host in ("0.0.0.0", "::", "192.168.1.2", "example.com"))


async def test_a_remote_client_is_not_offered_logout_and_cannot_remove_the_operators_saved_keys(
    tmp_path: Path,
) -> None:
    user = tmp_path / "operator"
    KeyStore(user / ".config" / "coder-agent").save("ANTHROPIC_API_KEY", "sk-ant-operators-own-0123", where="file")
    (user / ".config" / "coder-agent" / "config.toml").write_text('model = "anthropic/claude-sonnet-4-5"\n')
    credentials = user / ".config" / "coder-agent" / "credentials.toml"
    saved = credentials.read_text()
    settings = Settings.load({"HOME": str(user), "CODER_AGENT_HOME": str(user / "data")}, lenient=True)
    async with remote_server(settings) as running, connect(running.ws_url, additional_headers=running.auth) as ws:
        await ws.send(INITIALIZE)
        capabilities = json.loads(await ws.recv())["result"]["agentCapabilities"]
        await ws.send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "logout", "params": {}}))
        refused = json.loads(await ws.recv())
    assert "logout" not in capabilities.get("auth", {})
    assert refused["error"]["code"] == -32601
    assert "saved keys belong to the server's operator" in refused["error"]["message"]
    assert credentials.read_text() == saved
    assert KeyStore(user / ".config" / "coder-agent").names() == ["ANTHROPIC_API_KEY"]
