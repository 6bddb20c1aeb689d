"""One headless run: the agent built as `server.assembly` builds it, with `local.LocalClient` as its client,
driven in process through its own ACP handlers.

Every call goes through the agent's `Router` with wire params, exactly as an editor's requests do:
`initialize`, `session/new` (or `session/resume`: no replay), `session/set_config_option` for the mode
(and a continued session's model), then `session/prompt`. So the run is stored like any session, and an
editor can load it afterwards. Ctrl-C sends `session/cancel` (a second one exits at once).
"""

from __future__ import annotations

import base64
import logging
import os
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from typing import Any

import anyio

from .. import __version__
from ..acp.errors import RequestError
from ..acp.router import Router
from ..acp.schema import (
    ClientCapabilities,
    ContentBlock,
    ImageContent,
    Implementation,
    InitializeRequest,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    ResumeSessionRequest,
    SessionConfigSelect,
    SessionStateResponse,
    SessionUpdate,
    SetConfigOptionRequest,
    StopReason,
    TextContent,
    Wire,
)
from ..agent.sessions.live import Sessions
from ..config.settings import Settings
from ..local.client import LocalClient, PermissionPolicy, Questions
from ..prestart.capabilities import PROTOCOL_VERSION
from ..server.assembly import build_agent, open_store
from ..store.sqlite import SqliteSessionStore
from .output import Output, ReplyTally, RunResult, UsageTally
from .resume import NoSuchSession, resolve

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunRequest:
    prompt: str
    cwd: str  # absolute
    mode: str
    session_id: str | None = None  # continue this stored session: its id, the start of it, or `last` (`resume`)
    model: str | None = None  # a continued session switches to this model
    images: tuple[tuple[str, bytes], ...] | list[tuple[str, bytes]] = ()  # (MIME type, bytes) sent with the prompt


class RunError(Exception):
    """The run failed (a provider error, an unknown session ...); the message is for the user."""

    def __init__(self, message: str, session_id: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.session_id = session_id


class _Driver:
    """Calls the agent's handlers, and turns Ctrl-C into `session/cancel` (or stops the set-up)."""

    def __init__(self, router: Router, output: Output) -> None:
        self._router = router
        self._output = output
        self.interrupts = 0
        self.session_id: str | None = None
        self._prompting = False
        self._setup: anyio.CancelScope | None = None

    async def call(self, method: str, params: Wire) -> Any:
        return await self._router.handle_request(method, params.wire())

    async def watch(self, signals: AsyncIterator[signal.Signals]) -> None:
        async for _ in signals:
            self.interrupts += 1
            if self.interrupts > 1:
                self._output.notice("Interrupted again: exiting now.")
                self._output.close()
                sys.stdout.flush()
                os._exit(130)
            self._output.notice("Cancelling… (Ctrl-C again to quit at once)")
            if self._prompting and self.session_id is not None:
                await self._router.handle_notification("session/cancel", {"sessionId": self.session_id})
            elif self._setup is not None:
                self._setup.cancel()

    async def drive(self, request: RunRequest, sessions: Sessions, tally: UsageTally) -> StopReason:
        with anyio.CancelScope() as self._setup:
            client_info = Implementation(name="coder-agent-run", title="coder-agent run", version=__version__)
            params = InitializeRequest(
                protocol_version=PROTOCOL_VERSION, client_capabilities=ClientCapabilities(), client_info=client_info
            )
            await self.call("initialize", params)
            options = await self._open_session(request)
            await self._choose(options, "mode", request.mode)
            if request.session_id is not None and request.model is not None:
                await self._choose(options, "model", request.model)
            assert self.session_id is not None
            session = sessions.live[self.session_id]
            tally.cost_baseline_usd = session.cost_usd
            info = {"sessionId": self.session_id, "cwd": request.cwd, "model": session.model, "mode": session.mode}
            self._output.init({**info, "resumed": request.session_id is not None, "version": __version__})
            self._setup = None
            self._prompting = True
            images = [
                ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=kind)
                for kind, data in request.images
            ]
            blocks: list[ContentBlock] = [TextContent(text=request.prompt), *images]
            prompt = PromptRequest(session_id=self.session_id, prompt=blocks)
            response = PromptResponse.model_validate(await self.call("session/prompt", prompt))
            return response.stop_reason
        return "cancelled"  # interrupted before the prompt was sent

    async def _open_session(self, request: RunRequest) -> list[SessionConfigSelect]:
        if request.session_id is None:
            new = NewSessionRequest(cwd=request.cwd, mcp_servers=[])
            created = NewSessionResponse.model_validate(await self.call("session/new", new))
            self.session_id = created.session_id
            return created.config_options or []
        resume = ResumeSessionRequest(session_id=request.session_id, cwd=request.cwd)
        state = SessionStateResponse.model_validate(await self.call("session/resume", resume))
        self.session_id = request.session_id
        return state.config_options or []

    async def _choose(self, options: list[SessionConfigSelect], config_id: str, value: str) -> None:
        current = next((option.current_value for option in options if option.id == config_id), None)
        if current != value:
            assert self.session_id is not None
            choice = SetConfigOptionRequest(session_id=self.session_id, config_id=config_id, value=value)
            await self.call("session/set_config_option", choice)


def _no_capabilities(capabilities: ClientCapabilities) -> None:
    """The run's own `initialize` advertises nothing: this machine serves files and commands regardless."""


async def run_prompt(
    settings: Settings,
    request: RunRequest,
    output: Output,
    permissions: PermissionPolicy,
    questions: Questions | None = None,
) -> RunResult:
    """Run one prompt turn (Ctrl-C cancels it: stop reason `cancelled`). `questions`: who answers the agent's
    questions (a person at the terminal); None: nobody can be asked, and the agent is told so.

    Raises `RunError` when the agent answers with an error.
    """
    started = anyio.current_time()
    tally, reply = UsageTally(), ReplyTally()

    def on_update(update: SessionUpdate) -> None:
        tally.observe(update)
        reply.observe(update)
        try:
            output.update(update)
        except OSError as exc:  # stdout is gone (`| head`): the turn goes on, and is stored
            log.debug("update not shown: %s", exc)

    store, problem = open_store(settings)
    if request.session_id is not None:
        try:
            request = replace(request, session_id=resolve(store, request.session_id, request.cwd))
        except NoSuchSession as exc:
            if isinstance(store, SqliteSessionStore):
                store.close()
            raise RunError(str(exc)) from None
    router = Router()
    driver = _Driver(router, output)
    failure: RequestError | None = None
    stop_reason: StopReason = "cancelled"
    sessions: Sessions | None = None
    try:
        with anyio.open_signal_receiver(signal.SIGINT) as signals:
            async with anyio.create_task_group() as background:
                # files on disk, local commands (their output shown as it comes, on a terminal)
                client = LocalClient(on_update, permissions, background, questions, live_output=output.live_terminals)
                output.watch_terminals(client.output_of)
                sessions = Sessions(client, store, problem)
                build_agent(settings, client, _no_capabilities, sessions, background, router)
                background.start_soon(driver.watch, signals)
                background.start_soon(output.animate)
                try:
                    stop_reason = await driver.drive(request, sessions, tally)
                except RequestError as exc:
                    failure = exc
                finally:
                    background.cancel_scope.cancel()
    finally:
        if sessions is not None:
            sessions.release_locks()  # the session is no longer live here: another process may take it
        if isinstance(store, SqliteSessionStore):
            store.close()
    if failure is not None:
        raise RunError(failure.message, driver.session_id) from failure
    return RunResult(stop_reason, driver.session_id, anyio.current_time() - started, tally, reply)
