"""The core's own errors. The protocol layer (`server.errors`) maps each to a JSON-RPC error, in one place."""

from __future__ import annotations

from typing import Any


class AgentError(Exception):
    """An operation failed for a reason the user can act on; `message` says which, `data` adds detail."""

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data


class InvalidInput(AgentError):
    """What the client asked for cannot be done as asked (a relative path, an unknown mode, an empty prompt)."""


class SessionNotFound(AgentError):
    def __init__(self, session_id: str) -> None:
        super().__init__(f"Unknown session: {session_id}", {"sessionId": session_id})


class Busy(InvalidInput):
    """The session is doing something that this request would collide with (a prompt is already running)."""


class NotConfigured(AgentError):
    """A setting the request needs is missing or unusable; `data` names it."""


class AuthRequired(NotConfigured):
    """The request needs a model and its key, and the user has not given them yet (log in, or set them)."""


class StoreUnavailable(AgentError):
    """Sessions cannot be read or written (a corrupt or unreachable database)."""


class ClientError(AgentError):
    """The client failed a request of ours, or answered it with something malformed.

    Raised by `Client` implementations; it fails the one operation that needed the answer, never the turn.
    `code` is the client's JSON-RPC error code, when it gave one.
    """

    def __init__(self, message: str, code: int | None = None, data: Any = None) -> None:
        super().__init__(message, data)
        self.code = code


class ClientGone(ClientError):
    """The connection to the client is closed: nothing more can be sent to it."""
