"""Provider exceptions -> `ModelError` with a message a user can act on, and whether a retry may help."""

from __future__ import annotations

import email.utils
import time
from typing import Any

from .base import ModelError

_RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 529}

_TRANSIENT_NAMES = {
    "Timeout",
    "APITimeoutError",
    "APIConnectionError",
    "RateLimitError",
    "InternalServerError",
    "ServiceUnavailableError",
    "BadGatewayError",
    "MidStreamFallbackError",
    # raw transport errors that can escape mid-stream
    "RemoteProtocolError",
    "ReadError",
    "ReadTimeout",
    "ConnectError",
    "ConnectTimeout",
    "ClientPayloadError",
    "ServerDisconnectedError",
}


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def classify_error(exc: BaseException, model: str) -> ModelError:
    status = _status(exc)
    name = type(exc).__name__
    detail = str(getattr(exc, "message", None) or exc).strip().splitlines()[0][:500] if str(exc) else name
    if name == "AuthenticationError" or status == 401:
        return ModelError(
            f"The model provider rejected the credentials for {model} (401): {detail}. "
            "Set CODER_AGENT_API_KEY or the provider's own key variable (e.g. ANTHROPIC_API_KEY, OPENAI_API_KEY).",
            status=401,
        )
    if name == "PermissionDeniedError" or status == 403:
        return ModelError(f"The model provider denied access to {model} (403): {detail}", status=403)
    if name == "NotFoundError" or status == 404:
        return ModelError(
            f"The model provider does not know {model} (404): {detail}. Check CODER_AGENT_MODEL "
            "and CODER_AGENT_API_BASE.",
            status=404,
        )
    if name == "ContextWindowExceededError":
        return ModelError(f"The conversation no longer fits {model}'s context window: {detail}", status=status)
    if name == "MidStreamFallbackError" and "timeout" in str(getattr(exc, "original_exception", "")).lower():
        # litellm labels its own read timeout mid-stream a 500; nothing failed at the provider's end.
        return ModelError("The model stopped sending data mid-reply (read timeout)", retryable=True)
    if name in ("Timeout", "APITimeoutError", "ReadTimeout", "ConnectTimeout"):
        return ModelError(f"The model provider did not answer in time: {detail}", retryable=True, status=status)
    if name in ("APIConnectionError", "ConnectError") or _no_http_response(exc):
        return ModelError(f"Could not reach the model provider: {detail}", retryable=True)
    if name == "RateLimitError" or status == 429:
        return ModelError(f"The model provider is rate limiting requests (429): {detail}", retryable=True, status=429)
    retryable = name in _TRANSIENT_NAMES or (status is not None and status in _RETRYABLE_STATUS)
    where = f" ({status})" if status else ""
    return ModelError(f"The model provider failed{where}: {detail}", retryable=retryable, status=status)


def _no_http_response(exc: BaseException) -> bool:
    """litellm reports a refused or dropped connection as a 500 that came with no HTTP response at all."""
    return (
        type(exc).__name__ == "InternalServerError"
        and hasattr(exc, "litellm_response_headers")
        and getattr(exc, "litellm_response_headers", None) is None
    )


def retry_after_seconds(exc: BaseException) -> float | None:
    """The server's `Retry-After`, in seconds, when the exception carries the HTTP response's headers."""
    headers: Any = getattr(exc, "litellm_response_headers", None)
    if headers is None:
        headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    try:
        value = headers.get("retry-after")
    except Exception:
        return None
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value)
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None
