"""An MCP server's questions (its `elicitation/create` during a tool call), forwarded to the user through the editor.

A server asks while one of its tools runs: the question goes to the editor as a session elicitation tied to that
tool call (`agent.tools.asking`, which checks the answer against the form), and the answer goes back to the
server. A URL (a server's OAuth step, say) becomes a URL elicitation under an id of our own, unique on the
editor's connection; when the server says the step is done (`notifications/elicitation/complete`), the editor is
sent `elicitation/complete`. The client capability is advertised to the server only in the modes the editor
offers (`capability`). A question that cannot be put to the user (the editor has no such mode, the form is not
one ACP can show, a URL that is not http(s), no tool call to tie it to) is declined; each question and what came
of it is written into the tool call's result (`Asker.notes`), which the model and the user read, and
`session/load` replays.

Imports `mcp_types`: load it only through `coder_agent.mcp.connection` (off the event loop).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import anyio
import mcp_types as mcp
from pydantic import ValidationError

from ..acp.schema import CreateElicitationRequest, ElicitationMode, ElicitationSchema
from ..agent.errors import ClientError
from ..agent.tools.asking import Answer, ask
from ..agent.tools.base import ToolContext
from ..kit.ids import new_id

log = logging.getLogger(__name__)

MAX_OPEN_URLS = 100  # URL steps a server may leave open before the oldest is forgotten
_TOLD = {"accept": "answered", "decline": "declined", "cancel": "dismissed without an answer"}


@dataclass
class Asker:
    """The way to the user during one tool call (its context), and what the server asked during it."""

    ctx: ToolContext
    notes: list[str] = field(default_factory=list)
    # The questions open on its behalf. The server's requests are answered in the SDK's own task, not the call's:
    # when the call ends (a cancelled turn), these are withdrawn from the editor by cancelling them here.
    open: set[anyio.CancelScope] = field(default_factory=set)


class ServerQuestions:
    """One server's questions: the tool calls in flight (whose user a question goes to) and its open URLs."""

    def __init__(self, server: str, modes: frozenset[ElicitationMode]) -> None:
        self._server = server
        self._modes = modes
        self._askers: list[Asker] = []
        self._urls: dict[str, tuple[ToolContext, str]] = {}  # the server's elicitation id -> (its call, our id)

    def capability(self) -> mcp.ElicitationCapability | None:
        """What the server is told we can answer: the editor's modes, or nothing."""
        if not self._modes:
            return None
        return mcp.ElicitationCapability(
            form=mcp.FormElicitationCapability() if "form" in self._modes else None,
            url=mcp.UrlElicitationCapability() if "url" in self._modes else None,
        )

    @contextmanager
    def during(self, asker: Asker | None) -> Iterator[None]:
        """While a tool call runs, its server's questions go to its user."""
        if asker is None:
            yield
            return
        self._askers.append(asker)
        try:
            yield
        finally:
            self._askers.remove(asker)
            for scope in list(asker.open):
                scope.cancel()

    async def elicit(self, context: object, params: mcp.ElicitRequestParams) -> mcp.ElicitResult:
        """The ClientSession's elicitation callback."""
        asked = f"`{self._server}` asked: {params.message}"
        if not self._askers:  # between calls (while connecting, say): there is no tool call to show it in
            log.info("MCP server %s asked outside a tool call; declined", self._server)
            return mcp.ElicitResult(action="decline")
        # Calls of one server run one at a time unless they only read; among several, the latest is the likeliest.
        asker = self._askers[-1]
        with anyio.CancelScope() as scope:
            asker.open.add(scope)
            try:
                return await self._put(asker, params, asked)
            finally:
                asker.open.discard(scope)
        asker.notes.append(f"{asked} — withdrawn: the call ended first.")
        return mcp.ElicitResult(action="cancel")

    async def _put(self, asker: Asker, params: mcp.ElicitRequestParams, asked: str) -> mcp.ElicitResult:
        problem = self._why_not(asker, params)
        if problem is not None:
            asker.notes.append(f"{asked} — declined: {problem}.")
            return mcp.ElicitResult(action="decline")
        if isinstance(params, mcp.ElicitRequestURLParams):
            return await self._url(asker, params, asked)
        schema = ElicitationSchema.model_validate(params.requested_schema)
        request = CreateElicitationRequest(
            mode="form",
            message=f"{self._server}: {params.message}",
            requested_schema=schema,
            session_id=asker.ctx.session_id,
            tool_call_id=asker.ctx.tool_call_id or None,
        )
        answer = await ask(asker.ctx.client, request)
        told = self._told(answer)
        if answer.action == "accept":
            fields = (f"{name}: {json.dumps(value, ensure_ascii=False)}" for name, value in answer.content.items())
            told += " " + ", ".join(fields)
        asker.notes.append(f"{asked} — {told.rstrip()}.")
        return mcp.ElicitResult(action=answer.action, content=answer.content if answer.action == "accept" else None)

    def _why_not(self, asker: Asker, params: mcp.ElicitRequestParams) -> str | None:
        mode: ElicitationMode = "url" if isinstance(params, mcp.ElicitRequestURLParams) else "form"
        if mode not in self._modes or mode not in asker.ctx.client.elicitation_modes():
            return f"the editor offers no {mode} elicitation to put it to the user"
        if isinstance(params, mcp.ElicitRequestURLParams):
            if urlsplit(params.url).scheme not in ("https", "http"):
                return "only http(s) addresses are opened"
            return None
        try:
            ElicitationSchema.model_validate(params.requested_schema)
        except ValidationError as exc:
            first = exc.errors(include_url=False, include_input=False)[0]
            return f"its form is not one ACP can show ({'.'.join(map(str, first['loc']))}: {first['msg']})"
        return None

    async def _url(self, asker: Asker, params: mcp.ElicitRequestURLParams, asked: str) -> mcp.ElicitResult:
        ours = new_id("elicit")
        request = CreateElicitationRequest(
            mode="url",
            message=f"{self._server}: {params.message}",
            url=params.url,
            elicitation_id=ours,
            session_id=asker.ctx.session_id,
            tool_call_id=asker.ctx.tool_call_id or None,
        )
        if params.elicitation_id is not None:
            self._urls[params.elicitation_id] = (asker.ctx, ours)
            while len(self._urls) > MAX_OPEN_URLS:  # a server that never says it is done must not grow this
                del self._urls[next(iter(self._urls))]
        answer = await ask(asker.ctx.client, request)
        if answer.action != "accept" and params.elicitation_id is not None:
            self._urls.pop(params.elicitation_id, None)
        host = urlsplit(params.url).hostname or params.url
        told = f"the user agreed to open {host}" if answer.action == "accept" else self._told(answer)
        asker.notes.append(f"{asked} — {told}.")
        return mcp.ElicitResult(action=answer.action)

    async def on_message(self, message: object) -> None:
        """The ClientSession's message handler: a URL step the server says is done is done for the editor too."""
        if not isinstance(message, mcp.ElicitCompleteNotification):
            return
        found = self._urls.pop(message.params.elicitation_id, None)
        if found is None:  # not one of ours, or told twice
            return
        ctx, ours = found
        try:
            await ctx.client.complete_elicitation(ours)
        except ClientError as exc:
            log.info("could not tell the editor that %s is complete: %s", ours, exc.message)

    @staticmethod
    def _told(answer: Answer) -> str:
        if answer.problem is not None:
            return f"declined: {answer.problem}"
        return _TOLD[answer.action]
