"""`coder-agent acp`: wire the stdio transport, the JSON-RPC connection and the agent together."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import anyio
import anyio.abc

from .acp.jsonrpc import Connection
from .acp.lines import PrefixedStream
from .acp.remote_client import RemoteClient
from .acp.router import Router
from .acp.schema import ClientCapabilities
from .acp.stdio import stdio_streams
from .agent.acp_agent import AcpAgent, AgentOptions, ModelFactory
from .agent.client import Client
from .agent.sessions import Sessions
from .agent.tools import builtin_tools
from .llm.base import Model
from .settings import Settings
from .store.base import SessionStore, StoreError
from .store.sqlite import SqliteSessionStore

log = logging.getLogger(__name__)


def model_factory(settings: Settings) -> ModelFactory:
    """Models for each turn, from the settings: direct while litellm loads in the background, then litellm."""
    from .llm.config import ModelConfig
    from .llm.fast_start import FastStartModel

    def make(model: str, reasoning_effort: str | None) -> Model:
        return FastStartModel(
            ModelConfig(
                model=model,
                api_base=settings.api_base,
                api_key=settings.api_key,
                timeout=settings.request_timeout,
                max_retries=settings.max_retries,
                retry_base_delay=settings.retry_base_delay,
                max_tokens=settings.max_tokens,
                reasoning_effort=reasoning_effort,
            )
        )

    return make


def open_store(settings: Settings) -> tuple[SessionStore | None, str | None]:
    """The session store, or None and why not: the agent still works, it just cannot keep sessions."""
    try:
        return SqliteSessionStore(settings.home / "sessions.db"), None
    except StoreError as exc:
        log.error("%s", exc)
        return None, str(exc)


def agent_options(settings: Settings) -> AgentOptions:
    return AgentOptions(
        model=settings.model,
        models=settings.models,
        default_mode=settings.default_mode,
        max_turn_requests=settings.max_turn_requests,
        mcp_connect_timeout=settings.mcp_timeout,
        mcp_call_timeout=settings.mcp_call_timeout,
    )


def build_agent(
    settings: Settings,
    client: Client,
    set_client_capabilities: Callable[[ClientCapabilities], None],
    sessions: Sessions,
    background: anyio.abc.TaskGroup,
    router: Router,
) -> AcpAgent:
    """The agent as the settings describe it, its methods registered on `router` (editors and headless alike)."""
    agent = AcpAgent(
        client,
        set_client_capabilities,
        agent_options(settings),
        model_factory(settings),
        builtin_tools(),
        sessions,
        background,
    )
    agent.register(router)
    return agent


async def serve(
    settings: Settings,
    receive: anyio.abc.ByteReceiveStream,
    send: anyio.abc.ByteSendStream,
    early_initialize: dict[str, Any] | None = None,
) -> None:
    """Serve one ACP connection until its input ends (`early_initialize`: see `acp.early`)."""
    router = Router()
    connection = Connection(receive, send, router)
    client = RemoteClient(connection)
    store, problem = open_store(settings)
    async with anyio.create_task_group() as background:
        agent = build_agent(
            settings, client, client.set_capabilities, Sessions(client, store, problem), background, router
        )
        if early_initialize is not None:
            agent.adopt_initialize(early_initialize)
        await connection.serve()
        background.cancel_scope.cancel()


async def serve_stdio(
    settings: Settings, in_fd: int, out_fd: int, unread: bytes = b"", early_initialize: dict[str, Any] | None = None
) -> None:
    async with stdio_streams(in_fd, out_fd) as (receive, send):
        await serve(settings, PrefixedStream(unread, receive), send, early_initialize)
