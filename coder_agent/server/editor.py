"""`EditorClient`: the editor on the other end of the ACP connection, as the agent core's `Client`.

Its `fs/*` and `terminal/*` methods may be called only when the editor advertised them (`capabilities`, from
`initialize`): the assembly wraps it in `local.FillIn`, which serves the rest on this machine. Its failures
reach the core as `ClientError` (`ClientGone` once the connection is closed): the editor's own error, with its
detail, or an answer that does not match the protocol.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..acp.errors import ConnectionClosed, RequestError
from ..acp.jsonrpc import Connection
from ..acp.schema import (
    ClientCapabilities,
    CompleteElicitationNotification,
    CreateElicitationRequest,
    CreateElicitationResponse,
    CreateTerminalRequest,
    CreateTerminalResponse,
    ElicitationMode,
    EnvVariable,
    PermissionOption,
    PermissionOutcome,
    ReadTextFileRequest,
    ReadTextFileResponse,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SessionUpdate,
    TerminalExitStatus,
    TerminalOutputResponse,
    TerminalRequest,
    ToolCallFields,
    WriteTextFileRequest,
)
from ..agent.errors import ClientError, ClientGone
from .early_reply import EarlyReply

# A client that never answers must not hang the agent forever. A person may take a while to decide.
FILE_TIMEOUT = 60.0
TERMINAL_TIMEOUT = 60.0
PERMISSION_TIMEOUT = 30 * 60.0
QUESTION_TIMEOUT = 30 * 60.0

R = TypeVar("R", bound=BaseModel)


def _reply(method: str, model: type[R], result: Any) -> R:
    """The client's answer as `model`; a malformed one fails this one operation (`ClientError`), never more."""
    try:
        return model.model_validate(result)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False, include_context=False)[0]
        where = ".".join(str(part) for part in first["loc"]) or "result"
        raise ClientError(f"The client's answer to {method} is malformed: {where}: {first['msg']}") from None


class EditorClient:
    def __init__(self, connection: Connection, early: EarlyReply | None = None) -> None:
        self._connection = connection
        self._capabilities = ClientCapabilities()
        self._early = early  # what the early stage showed of the first reply: not sent twice

    @property
    def capabilities(self) -> ClientCapabilities:
        return self._capabilities

    def set_capabilities(self, capabilities: ClientCapabilities) -> None:
        self._capabilities = capabilities

    async def session_update(self, session_id: str, update: SessionUpdate) -> None:
        if self._early is not None:
            kept = self._early.filter(session_id, update)
            if kept is None:
                return
            update = kept
        params = b'{"sessionId":%s,"update":%s}' % (json.dumps(session_id).encode(), update.wire_json())
        try:
            await self._connection.notify_json("session/update", params)
        except ConnectionClosed as exc:
            raise ClientGone(exc.message) from exc

    async def replay_updates(self, session_id: str, updates_json: Sequence[bytes]) -> None:
        # One write for the whole batch: replaying 10,000 updates must take a fraction of a second.
        prefix = b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":%s,"update":' % (
            json.dumps(session_id).encode()
        )
        try:
            await self._connection.write_lines(b"".join(b"%s%s}}\n" % (prefix, body) for body in updates_json))
        except ConnectionClosed as exc:
            raise ClientGone(exc.message) from exc

    async def request_permission(
        self, session_id: str, tool_call: ToolCallFields, options: Sequence[PermissionOption]
    ) -> PermissionOutcome:
        params = RequestPermissionRequest(session_id=session_id, tool_call=tool_call, options=list(options))
        result = await self._call("session/request_permission", params.wire(), PERMISSION_TIMEOUT)
        return _reply("session/request_permission", RequestPermissionResponse, result).outcome

    def can_ask_user(self) -> bool:
        return True  # a permission request at least: every client answers those

    def elicitation_modes(self) -> frozenset[ElicitationMode]:
        return self._capabilities.elicitation_modes

    async def create_elicitation(self, request: CreateElicitationRequest) -> CreateElicitationResponse:
        if request.mode not in self.elicitation_modes():
            raise ClientError(f"the client does not offer {request.mode} elicitation")
        result = await self._call("elicitation/create", request.wire(), QUESTION_TIMEOUT)
        return _reply("elicitation/create", CreateElicitationResponse, result)

    async def complete_elicitation(self, elicitation_id: str) -> None:
        params = CompleteElicitationNotification(elicitation_id=elicitation_id).wire()
        try:
            await self._connection.notify("elicitation/complete", params)
        except ConnectionClosed as exc:
            raise ClientGone(exc.message) from exc

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None
    ) -> str:
        params = ReadTextFileRequest(session_id=session_id, path=path, line=line, limit=limit)
        result = await self._call("fs/read_text_file", params.wire(), FILE_TIMEOUT)
        return _reply("fs/read_text_file", ReadTextFileResponse, result).content

    async def write_text_file(self, session_id: str, path: str, content: str) -> None:
        params = WriteTextFileRequest(session_id=session_id, path=path, content=content)
        # As it is: a file that held a key (a `.env` the model edited elsewhere) must still hold it, not its mask.
        await self._call("fs/write_text_file", params.wire(), FILE_TIMEOUT, verbatim=True)

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: Sequence[str] = (),
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        output_byte_limit: int | None = None,
    ) -> str:
        params = CreateTerminalRequest(
            session_id=session_id,
            command=command,
            args=list(args),
            cwd=cwd,
            env=[EnvVariable(name=k, value=v) for k, v in (env or {}).items()],
            output_byte_limit=output_byte_limit,
        )
        # As it is: the command runs what it says (a key the user gave in the prompt included); it is shown masked.
        result = await self._call("terminal/create", params.wire(), TERMINAL_TIMEOUT, verbatim=True)
        return _reply("terminal/create", CreateTerminalResponse, result).terminal_id

    def takes_compaction_updates(self) -> bool:
        return self._capabilities.compaction_updates

    def shows_terminal(self, terminal_id: str) -> bool:
        return True  # every terminal it created is one of its own, shown to the user

    async def terminal_output(self, session_id: str, terminal_id: str) -> TerminalOutputResponse:
        result = await self._terminal("terminal/output", session_id, terminal_id, TERMINAL_TIMEOUT)
        return _reply("terminal/output", TerminalOutputResponse, result)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str) -> TerminalExitStatus:
        # The command may run for long; the caller bounds this wait with its own timeout.
        result = await self._terminal("terminal/wait_for_exit", session_id, terminal_id, None)
        return _reply("terminal/wait_for_exit", TerminalExitStatus, result)

    async def kill_terminal(self, session_id: str, terminal_id: str) -> None:
        await self._terminal("terminal/kill", session_id, terminal_id, TERMINAL_TIMEOUT)

    async def release_terminal(self, session_id: str, terminal_id: str) -> None:
        await self._terminal("terminal/release", session_id, terminal_id, TERMINAL_TIMEOUT)

    async def _terminal(self, method: str, session_id: str, terminal_id: str, timeout: float | None) -> Any:
        params = TerminalRequest(session_id=session_id, terminal_id=terminal_id).wire()
        return await self._call(method, params, timeout)

    async def _call(self, method: str, params: dict[str, Any], timeout: float | None, verbatim: bool = False) -> Any:
        try:
            result = await self._connection.request(method, params, timeout=timeout, verbatim=verbatim)
        except ConnectionClosed as exc:
            raise ClientGone(f"{method}: {exc.message}") from exc
        except RequestError as exc:  # the client's own error; its detail is in the message (`from_wire`)
            raise ClientError(exc.message, exc.code, exc.data) from exc
        return result if result is not None else {}
