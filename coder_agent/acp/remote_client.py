"""`RemoteClient`: the editor on the other end of the ACP connection, as the agent core's `Client`."""

from __future__ import annotations

import json
from typing import Any

from .jsonrpc import Connection
from .schema import ClientCapabilities, ReadTextFileRequest, ReadTextFileResponse, SessionUpdate

# A client that never answers must not hang the agent forever.
FILE_TIMEOUT = 60.0


class RemoteClient:
    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._capabilities = ClientCapabilities()

    @property
    def capabilities(self) -> ClientCapabilities:
        return self._capabilities

    def set_capabilities(self, capabilities: ClientCapabilities) -> None:
        self._capabilities = capabilities

    async def session_update(self, session_id: str, update: SessionUpdate) -> None:
        params = b'{"sessionId":%s,"update":%s}' % (json.dumps(session_id).encode(), update.wire_json())
        await self._connection.notify_json("session/update", params)

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None
    ) -> str:
        params = ReadTextFileRequest(session_id=session_id, path=path, line=line, limit=limit)
        result: Any = await self._connection.request("fs/read_text_file", params.wire(), timeout=FILE_TIMEOUT)
        return ReadTextFileResponse.model_validate(result or {}).content
