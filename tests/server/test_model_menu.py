"""The model menu lists the models the provider offers where it can be asked, besides the configured ones."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION
from acp.schema import ConfigOptionUpdate

from coder_agent.llm.model_list import ModelListError, list_models
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.inproc import inproc_agent
from tests.support.inproc import test_settings as make_test_settings
from tests.support.recording_client import RecordingClient

pytestmark = pytest.mark.anyio


def model_values(update: Any) -> list[str]:
    [option] = [option for option in update.config_options if option.id == "model"]
    return [choice.value for choice in option.options]


async def test_the_models_an_openai_compatible_server_lists_join_the_menu_after_session_new(tmp_path: Path) -> None:
    with ScriptedModelServer(listed_models=["qwen-coder", "llama-3"]) as server:
        settings = make_test_settings(tmp_path / "home", server.url, models=["openai/also-configured"])
        client = RecordingClient()
        async with inproc_agent(settings, client) as agent:
            await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
            new = await agent.conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            [first] = [option for option in new.config_options or [] if option.id == "model"]
            assert [choice.value for choice in first.options] == ["openai/scripted", "openai/also-configured"]

            def updated() -> list[Any]:
                return [u for u in client.updates(new.session_id) if isinstance(u, ConfigOptionUpdate)]

            await client.wait_for(lambda: bool(updated()), timeout=10)
    assert model_values(updated()[-1]) == [
        "openai/scripted",
        "openai/also-configured",
        "openai/qwen-coder",
        "openai/llama-3",
    ]


async def test_an_ollama_server_is_asked_for_its_tags(tmp_path: Path) -> None:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from threading import Thread

    class Tags(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b'{"models": [{"name": "qwen2.5-coder:7b"}, {"name": "llama3.2:latest"}]}'
            code = 200 if self.path == "/api/tags" else 404
            self.send_response(code)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Tags)
    Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        found = await list_models("ollama_chat/qwen2.5-coder:7b", base, None, {})
    finally:
        server.shutdown()
        server.server_close()
    assert found == ["ollama_chat/qwen2.5-coder:7b", "ollama_chat/llama3.2:latest"]


async def test_hosted_providers_are_not_asked_and_a_dead_server_fails_within_the_bound() -> None:
    assert await list_models("anthropic/claude-sonnet-4-5", None, "k", {}) == []
    assert await list_models("openai/gpt-4o", None, "k", {}) == []  # OpenAI's own list is not the user's choice
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    with pytest.raises(ModelListError, match=str(port)):
        await list_models("openai/x", f"http://127.0.0.1:{port}/v1", None, {}, timeout=2)
