"""The one place that assembles the agent, for every entry point: editors on stdio, and the headless run."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import anyio
import anyio.abc

from ..acp.jsonrpc import Connection
from ..acp.lines import PrefixedStream
from ..acp.router import Router
from ..acp.schema import ClientCapabilities
from ..acp.stdio import stdio_streams
from ..agent.client import Client
from ..agent.commands import Commands
from ..agent.permissions.rules_file import RuleFile
from ..agent.prompting import ModelFactory, Turns
from ..agent.sessions.claims import SessionClaims
from ..agent.sessions.live import Sessions
from ..agent.sessions.options import SessionConfig
from ..agent.tools import builtin_tools
from ..agent.tools.fetch_addresses import FetchPolicy
from ..agent.usage import Prices
from ..config.settings import Settings
from ..kit.logs import mask_records
from ..llm.base import Model
from ..llm.wire.usable import request_key
from ..local.fill_in import FillIn
from ..prestart.early import EarlyRead
from ..prestart.early_call import EarlyCall
from ..prestart.early_session import EarlySession
from ..store.base import SessionStore, StoreError
from ..store.sqlite import SqliteSessionStore
from .early_reply import EarlyReply, WithoutAnswer
from .editor import EditorClient
from .handlers import Handlers
from .language_servers import diagnostics_factory
from .preload import Preload
from .session_handlers import SessionHandlers
from .session_mcp import SessionMcp
from .settings_problems import SettingsProblems
from .state import AgentState

log = logging.getLogger(__name__)


def model_factory(current: Callable[[], Settings], early_call: EarlyCall | None = None) -> ModelFactory:
    """Models for each call, from the settings of the moment (`llm.factory`: the agent's own adapter for the wires it
    speaks, litellm for the rest). `early_call`: the first prompt's first model call, made before the runtime was
    in; its session's first call takes it over."""
    from ..llm.factory import make_model
    from ..llm.wire.config import ModelConfig

    def make(model: str, reasoning_effort: str | None, session_id: str) -> Model:
        settings = current()
        early = early_call if early_call is not None and early_call.session_id == session_id else None
        return make_model(
            ModelConfig(
                model=model,
                api_base=settings.api_base,
                api_key=request_key(model, settings.api_base, settings.api_key, settings.environ),
                timeout=settings.request_timeout,
                max_retries=settings.max_retries,
                retry_base_delay=settings.retry_base_delay,
                max_tokens=settings.max_tokens,
                reasoning_effort=reasoning_effort,
            ),
            cache_key=session_id,
            early=early,
            environ=settings.environ,
        )

    return make


def fetch_policy(settings: Settings) -> FetchPolicy:
    """What the user's config lets the fetch tool reach besides public addresses."""
    return FetchPolicy.of(settings.fetch_allow_hosts, settings.fetch_allow_private)


def prices_of(settings: Settings) -> Prices | None:
    """The user's prices for a model litellm does not price; None when they gave none."""
    if settings.input_price is None and settings.output_price is None:
        return None
    return Prices(settings.input_price or 0.0, settings.output_price or 0.0)


def open_store(settings: Settings) -> tuple[SessionStore | None, str | None]:
    """The session store, or None and why not: the agent still works, it just cannot keep sessions."""
    try:
        return SqliteSessionStore(settings.home / "sessions.db"), None
    except StoreError as exc:
        log.error("%s", exc)
        return None, str(exc)


def build_agent(
    settings: Settings,
    client: Client,
    set_client_capabilities: Callable[[ClientCapabilities], None],
    sessions: Sessions,
    background: anyio.abc.TaskGroup,
    router: Router,
    *,
    remote: bool = False,
    early_reply: EarlyReply | None = None,
) -> tuple[Handlers, SessionHandlers]:
    """The agent as the settings describe it, its methods registered on `router` (editors and headless alike;
    `remote`: for a client of `coder-agent serve`; `early_reply`: the first prompt's reply as the early stage
    showed it)."""

    def current() -> Settings:  # a login read again replaces them
        return state.settings

    turns = Turns(
        client,
        sessions,
        model_factory(current, early_reply.call if early_reply is not None else None),
        lambda: builtin_tools(lambda: fetch_policy(current()), ripgrep=current().ripgrep),
        max_turn_requests=settings.max_turn_requests,
        tool_wait=settings.mcp_timeout,
        compact_at=settings.compact_at,
        context_window=settings.context_window,
        images=settings.images,
        prices=prices_of(settings),
        commands=Commands(settings.config_dir / "commands" if settings.config_dir is not None else None),
    )
    config = SessionConfig(settings.model, settings.models)
    if settings.config_dir is not None:
        sessions.rule_book = RuleFile(settings.config_dir)
    sessions.diagnostics_for = diagnostics_factory(current, background)
    mcp = SessionMcp(current, client, background)
    preload = Preload(background, turns)
    state = AgentState(
        client, set_client_capabilities, settings, sessions, turns, config, background, mcp, preload, remote
    )
    state.early_reply = early_reply
    handlers, session_handlers = Handlers(state), SessionHandlers(state)
    handlers.register(router)
    session_handlers.register(router)
    if settings.problems:
        router.before_request = SettingsProblems(settings.problems).check
    return handlers, session_handlers


async def serve(
    settings: Settings,
    receive: anyio.abc.ByteReceiveStream,
    send: anyio.abc.ByteSendStream,
    early_initialize: dict[str, Any] | None = None,
    claims: SessionClaims | None = None,
    early_session: EarlySession | None = None,
    *,
    remote: bool = False,
    on_input_end: Callable[[], None] | None = None,
    early_call: EarlyCall | None = None,
) -> None:
    """Serve one ACP connection until its input ends (`early_initialize`, `early_session`, `early_call`: see
    `prestart.early`).

    `claims`: this is one of several connections sharing the store (`coder-agent serve`): when it ends, its
    sessions are saved and let go, so that another connection can load them. When the input ends, the turns
    running are cancelled at once, and `on_input_end` is called.
    """
    settings.learn_secrets()  # the settings may have been made in code (a test, the headless run's overrides)
    mask_records()
    router = Router()
    connection = Connection(receive, send, router)
    early_reply = EarlyReply(early_call) if early_call is not None else None
    editor = EditorClient(connection, early_reply)
    store, problem = open_store(settings)
    sessions: Sessions | None = None
    try:
        async with anyio.create_task_group() as background:
            client = FillIn(editor, background)  # what the editor does not offer, this machine serves
            sessions = Sessions(client, store, problem, claims)
            connection.on_input_end = _at_input_end(sessions, on_input_end)
            handlers, session_handlers = build_agent(
                settings,
                client,
                editor.set_capabilities,
                sessions,
                background,
                router,
                remote=remote,
                early_reply=early_reply,
            )
            if early_initialize is not None:
                handlers.adopt_initialize(early_initialize)
            if early_session is not None:  # before any request is read: they may name it
                await session_handlers.adopt(early_session)
            await connection.serve()
            background.cancel_scope.cancel()
    finally:
        if claims is not None:  # the turns have stopped (`serve` waited for them): nothing writes any more
            if sessions is not None:
                sessions.release_all()
            if isinstance(store, SqliteSessionStore):
                store.close()
        elif sessions is not None:
            sessions.release_locks()  # no longer live here: another process may take them


def _at_input_end(sessions: Sessions, then: Callable[[], None] | None) -> Callable[[], None]:
    def ended() -> None:
        sessions.cancel_turns()  # each saves its state as a cancel does, instead of being cut off later
        if then is not None:
            then()

    return ended


async def serve_stdio(
    settings: Settings,
    in_fd: int,
    out_fd: int,
    early: EarlyRead | None = None,
    on_input_end: Callable[[], None] | None = None,
) -> None:
    early = early or EarlyRead(b"", None)
    async with stdio_streams(in_fd, out_fd) as (receive, send):
        session = early.answered if isinstance(early.answered, EarlySession) else None
        stream = PrefixedStream(early.unread, receive, early.eof)
        if early.call is not None and early.call.answered is not None:
            send = WithoutAnswer(send, early.call.answered)
        await serve(
            settings,
            stream,
            send,
            early.initialize,
            None,
            session,
            on_input_end=on_input_end,
            early_call=early.call,
        )
