"""The core's errors as JSON-RPC errors: the one place that decides which code each failure gets."""

from __future__ import annotations

import functools
import os
from collections.abc import Awaitable, Callable
from typing import TypeVar

from ..acp.errors import AUTH_REQUIRED, INTERNAL_ERROR, RESOURCE_NOT_FOUND, RequestError
from ..agent.errors import AgentError, AuthRequired, InvalidInput, SessionNotFound, StoreUnavailable
from ..llm.base import ModelError
from ..store.base import StoreError

P = TypeVar("P")
R = TypeVar("R")


def to_request_error(exc: Exception) -> RequestError | None:
    """The JSON-RPC error for a failure of the core; None for anything else (a bug: -32603 with a traceback)."""
    if isinstance(exc, InvalidInput):
        return RequestError.invalid_params(exc.message, exc.data)
    if isinstance(exc, AuthRequired):
        return RequestError(AUTH_REQUIRED, exc.message, exc.data)
    if isinstance(exc, SessionNotFound):
        return RequestError(RESOURCE_NOT_FOUND, exc.message, exc.data)
    if isinstance(exc, StoreUnavailable):
        return RequestError(INTERNAL_ERROR, exc.message, exc.data)
    if isinstance(exc, StoreError):
        return RequestError(INTERNAL_ERROR, f"Sessions cannot be read: {exc}")
    if isinstance(exc, ModelError):
        # The provider refused the key: "auth required", so that the editor offers its login.
        code = AUTH_REQUIRED if exc.status == 401 else INTERNAL_ERROR
        return RequestError(code, exc.message, {"retryable": exc.retryable, "status": exc.status})
    if isinstance(exc, AgentError):
        return RequestError(INTERNAL_ERROR, exc.message, exc.data)
    return None


def mapped(handler: Callable[[P], Awaitable[R]]) -> Callable[[P], Awaitable[R]]:
    """`handler` with the core's errors turned into JSON-RPC errors."""

    @functools.wraps(handler)
    async def wrapped(params: P) -> R:
        try:
            return await handler(params)
        except (AgentError, ModelError, StoreError) as exc:
            error = to_request_error(exc)
            if error is None:
                raise
            raise error from exc

    return wrapped


def require_absolute(name: str, path: str) -> None:
    if not os.path.isabs(path):
        raise RequestError.invalid_params(f"Invalid params: {name} must be an absolute path, got {path!r}")
