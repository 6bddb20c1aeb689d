"""Short, human messages for what goes wrong talking to an MCP server.

The SDK's errors often arrive wrapped (several levels deep) in ExceptionGroups; the first real leaf is the
story. Imports the mcp SDK: load it only through `coder_agent.mcp.connection`.
"""

from __future__ import annotations

import anyio
import httpx2
from mcp import MCPError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT


def leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in leaves(inner)]
    return [exc]


def root_cause(exc: BaseException) -> BaseException:
    """The first leaf that is not a cancellation (anyio's cancellations are the tail of the story)."""
    found = leaves(exc)
    cancelled = anyio.get_cancelled_exc_class()
    return next((leaf for leaf in found if not isinstance(leaf, cancelled)), found[0])


def is_failure(exc: BaseException) -> bool:
    """Some leaf is an error to handle, the others (if any) cancellations: not a KeyboardInterrupt, not a cancel."""
    cancelled = anyio.get_cancelled_exc_class()
    found = leaves(exc)
    return any(isinstance(leaf, Exception) for leaf in found) and all(
        isinstance(leaf, Exception | cancelled) for leaf in found
    )


def is_connection_lost(exc: BaseException) -> bool:
    cause = root_cause(exc)
    return isinstance(cause, MCPError) and cause.code == CONNECTION_CLOSED


def is_timeout(exc: BaseException) -> bool:
    cause = root_cause(exc)
    return isinstance(cause, TimeoutError) or (isinstance(cause, MCPError) and cause.code == REQUEST_TIMEOUT)


def describe(exc: BaseException) -> str:
    cause = root_cause(exc)
    if isinstance(cause, MCPError):
        if cause.code == CONNECTION_CLOSED:
            return "the connection closed (the server exited or stopped answering)"
        return cause.message or f"error {cause.code}"
    if isinstance(cause, FileNotFoundError) and cause.filename:
        return f"command not found: {cause.filename}"
    if isinstance(cause, OSError) and cause.strerror:
        return f"{cause.strerror}" + (f": {cause.filename}" if cause.filename else "")
    if isinstance(cause, httpx2.HTTPStatusError):
        return f"HTTP {cause.response.status_code} from {cause.request.url}"
    if isinstance(cause, httpx2.ConnectError):
        return f"cannot connect to {_url(cause)} ({cause})"
    if isinstance(cause, httpx2.HTTPError):
        return f"{type(cause).__name__}: {cause}" if str(cause) else type(cause).__name__
    text = str(cause)
    return f"{type(cause).__name__}: {text}" if text else type(cause).__name__


def _url(error: httpx2.RequestError) -> str:
    try:
        return str(error.request.url)
    except RuntimeError:  # an error raised without its request
        return "the server"
