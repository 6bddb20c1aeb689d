"""Provider exceptions -> `ModelError` with a message a user can act on, and whether a retry may help."""

from __future__ import annotations

import email.utils
import json
import re
import socket
import time
from collections.abc import Iterator, Mapping
from typing import Any

from ..kit.masking import mask
from .base import ModelError
from .wire.providers import key_variable

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

CUT_OFF = "The model's reply was cut off"

# What the SDKs say when they refuse to send a request without a key (never an HTTP answer).
_MISSING_KEY = re.compile(r"missing credentials|api_key client option must be set|missing \w+ api key", re.I)
# litellm's prefixes in front of the provider's own words: "litellm.RateLimitError: RateLimitError: OpenAIException - "
_LITELLM_PREFIX = re.compile(r"^(?:litellm\.\w+: |\w+Error: |\w+Exception - |AnthropicError - )+")
_LITELLM_SUFFIX = re.compile(r"\. Handle with `litellm\.\w+`\.?$")
# The statuses Anthropic gives these error types; litellm reports some of them under another status.
_ANTHROPIC_STATUS = {"overloaded_error": 529, "request_too_large": 413}
# The words litellm recognises a context-window error by (its ExceptionCheckers, plus Anthropic's).
_CONTEXT_WINDOW_WORDS = (
    "exceed context limit",
    "this model's maximum context length is",
    "model's maximum context limit",
    "is longer than the model's context length",
    "input tokens exceed the configured limit",
    "exceeds the available context size",
    "exceeds the maximum number of tokens allowed",
    "prompt is too long",
    "prompt: length",
)


class StreamEndedEarly(Exception):
    """The provider's stream ended without a finish reason: the reply was cut off, or never came."""

    def __init__(self, *, received: bool) -> None:
        super().__init__("the stream ended without a finish reason")
        self.received = received


# What the direct path raises (litellm raises its own exceptions for the same failures).
class ProviderHTTPError(Exception):
    """The provider answered with an HTTP error; `message` (and `kind`) are its own words from the error body."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str], kind: str | None = None) -> None:
        super().__init__(message)
        self.status_code = status
        self.message = message
        self.headers = headers
        self.kind = kind


class ProviderUnreachable(Exception):
    """No HTTP answer came: the connection failed or closed first (the cause is chained)."""


class ProviderStreamError(Exception):
    """The provider sent an error event inside its stream (an OpenAI-style `{"error": ...}`, Anthropic's `error`)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class StreamStalled(Exception):
    """The provider's answer started, then no data came within the timeout."""


class StreamDropped(Exception):
    """The connection broke while the provider's answer was streaming."""


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """`exc` and the exceptions it came from (`__cause__`, else `__context__`), outermost first."""
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        yield link
        link = link.__cause__ or link.__context__


def _provider_words(exc: BaseException) -> tuple[str, str | None]:
    """The provider's own error message (and error type, when it gave one), without litellm's wrapping."""
    if isinstance(exc, ProviderHTTPError):
        return exc.message[:500], exc.kind
    text = str(getattr(exc, "message", None) or exc).strip()
    if not text:
        return type(exc).__name__, None
    line = _LITELLM_SUFFIX.sub("", _LITELLM_PREFIX.sub("", text.splitlines()[0]))
    # litellm quotes an Anthropic error body as bytes: b'{"type": "error", "error": {...}}'
    start, end = line.find("{"), line.rfind("}")
    if 0 <= start < end:
        try:
            error = json.loads(line[start : end + 1]).get("error")
        except (ValueError, AttributeError):
            error = None
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            kind = error.get("type")
            return error["message"][:500], kind if isinstance(kind, str) else None
    return line[:500], None


def is_context_window_error(message: str) -> bool:
    lowered = message.lower()
    return any(words in lowered for words in _CONTEXT_WINDOW_WORDS)


def _has_http_response(exc: BaseException) -> bool:
    """Whether the provider answered at all (litellm keeps the answer's headers; a refused connection has none)."""
    if type(exc).__module__.startswith("litellm"):  # its `response` is a stand-in, even without an answer
        return bool(getattr(exc, "litellm_response_headers", None))
    return getattr(exc, "response", None) is not None


def _detail(exc: BaseException) -> str:
    return _provider_words(exc)[0]


def _clause(text: str) -> str:
    """The provider's words as a clause our sentence goes on after: without the full stop they may end with (a
    message that ends "... on the dashboard." followed by ". Set ..." would read "dashboard.. Set")."""
    return text.strip().rstrip(".").rstrip()


def connection_cause(exc: BaseException) -> str:
    """Why a connection failed, in a few words ("connection refused", "host name not found", ...)."""
    for link in _chain(exc):
        name = type(link).__name__
        if isinstance(link, ConnectionRefusedError):
            return "connection refused"
        if isinstance(link, socket.gaierror):
            return "host name not found"
        if name.startswith("SSL") or "Certificate" in name:
            return f"TLS failed ({link})"
        if isinstance(link, TimeoutError) or name in ("ConnectTimeout", "ServerTimeoutError"):
            return "connection timed out"
        if isinstance(link, ConnectionResetError):
            return "connection reset"
    return _detail(exc)


def no_key_error(model: str, api_base: str | None) -> ModelError:
    variable = key_variable(model)
    where = f"or {variable}" if variable else "or the provider's own key variable"
    local = "; for a local server that checks no key, any value will do" if api_base else ""
    return ModelError(f"No API key found for {model}. Set CODER_AGENT_API_KEY {where}{local}.")


def no_provider_error(model: str) -> ModelError:
    return ModelError(
        f"CODER_AGENT_MODEL={model} names no provider litellm knows: CODER_AGENT_MODEL needs a provider prefix, "
        f"e.g. openai/{model} for an OpenAI-compatible server (with CODER_AGENT_API_BASE), or anthropic/..., "
        "ollama/..."
    )


def unreachable_error(exc: BaseException, model: str, api_base: str | None) -> ModelError:
    cause = connection_cause(exc)
    if api_base:
        return ModelError(
            f"Could not reach the model provider at {api_base}: {_clause(cause)}. Check CODER_AGENT_API_BASE",
            retryable=True,
        )
    return ModelError(
        f"Could not reach the model provider for {model}: {_clause(cause)}. Check the network and any proxy "
        "(HTTPS_PROXY)",
        retryable=True,
    )


def classify_error(exc: BaseException, model: str, api_base: str | None = None) -> ModelError:
    """The `ModelError` for a provider failure, on either path. The provider's words may quote the key it was
    sent, or the address it was reached at: every secret the agent knows is masked in the message (`masking`),
    so that both paths say the same and no sink gets the key from it."""
    error = _classified(exc, model, api_base)
    error.message = mask(error.message)
    error.args = (error.message,)
    return error


def _classified(exc: BaseException, model: str, api_base: str | None) -> ModelError:
    if isinstance(exc, StreamEndedEarly):
        if exc.received:
            return ModelError(
                f"{CUT_OFF}: the provider's stream ended before the reply was complete (no finish reason)",
                retryable=True,
            )
        return ModelError(
            "The model provider sent an empty reply (no text, no tool call, no finish reason)", retryable=True
        )
    if isinstance(exc, StreamStalled):
        return stalled_error()
    if isinstance(exc, StreamDropped):
        return dropped_error(exc)
    if isinstance(exc, ProviderUnreachable):
        return unreachable_error(exc, model, api_base)
    if isinstance(exc, ProviderStreamError):
        return stream_error(exc.message)
    status = _status(exc)
    name = type(exc).__name__
    detail, kind = _provider_words(exc)
    status = _ANTHROPIC_STATUS.get(kind or "", status) if status is not None else None
    if any(_MISSING_KEY.search(str(link)) for link in _chain(exc)):
        error = no_key_error(model, api_base)
        error.status = status if _has_http_response(exc) else None
        return error
    if "LLM Provider NOT provided" in str(exc):
        return no_provider_error(model)
    if name == "AuthenticationError" or status == 401:
        return ModelError(
            f"The model provider rejected the credentials for {model} (401): {_clause(detail)}. "
            "Log in again (`coder-agent login`), or set CODER_AGENT_API_KEY or the provider's own key variable "
            "(e.g. ANTHROPIC_API_KEY, OPENAI_API_KEY).",
            status=401,
        )
    if name == "PermissionDeniedError" or status == 403:
        return ModelError(f"The model provider denied access to {model} (403): {detail}", status=403)
    if name == "NotFoundError" or status == 404:
        return ModelError(
            f"The model provider does not know {model} (404): {_clause(detail)}. Check CODER_AGENT_MODEL "
            "and CODER_AGENT_API_BASE.",
            status=404,
        )
    if name == "ContextWindowExceededError" or (isinstance(exc, ProviderHTTPError) and is_context_window_error(detail)):
        return ModelError(
            f"The conversation no longer fits {model}'s context window: {detail}", status=status, context_window=True
        )
    if name == "MidStreamFallbackError":
        original = getattr(exc, "original_exception", None)
        # An error event in the stream: the OpenAI SDK raises its APIError; litellm's Anthropic handler a 500.
        event = next(
            (e for e in _chain(exc) if type(e).__module__.startswith("openai") and type(e).__name__ == "APIError"), None
        )
        if event is not None:
            return stream_error(str(event))
        if type(original).__name__ == "InternalServerError":
            return stream_error(_detail(original) if original is not None else detail)
        if "timeout" in str(original).lower():
            # litellm labels its own read timeout mid-stream a 500; nothing failed at the provider's end.
            return stalled_error()
        if type(original).__name__ == "APIConnectionError":
            return dropped_error(exc)
    if name in ("RemoteProtocolError", "ReadError", "ClientPayloadError", "ServerDisconnectedError"):
        return dropped_error(exc)
    if name in ("Timeout", "APITimeoutError", "ReadTimeout", "ConnectTimeout", "WriteTimeout", "PoolTimeout"):
        return ModelError("The model provider did not answer in time (CODER_AGENT_REQUEST_TIMEOUT)", retryable=True)
    if name in ("APIConnectionError", "ConnectError") or (
        name == "InternalServerError" and not _has_http_response(exc)
    ):
        # litellm reports a refused or dropped connection as a 500 that came with no HTTP response at all.
        return unreachable_error(exc, model, api_base)
    if name == "RateLimitError" or status == 429:
        return ModelError(f"The model provider is rate limiting requests (429): {detail}", retryable=True, status=429)
    retryable = name in _TRANSIENT_NAMES or (status is not None and status in _RETRYABLE_STATUS)
    where = f" ({status})" if status else ""
    return ModelError(f"The model provider failed{where}: {detail}", retryable=retryable, status=status)


def stream_error(message: str) -> ModelError:
    return ModelError(f"The model provider reported an error mid-reply: {message}", retryable=True)


def stalled_error() -> ModelError:
    return ModelError("The model stopped sending data mid-reply (read timeout)", retryable=True)


def dropped_error(exc: BaseException) -> ModelError:
    return ModelError(f"{CUT_OFF}: the connection to the provider dropped mid-reply", retryable=True)


def after_shown(error: ModelError) -> ModelError:
    """The error once part of the reply was shown: never retried (the user would see it twice)."""
    message = error.message
    if not message.startswith(CUT_OFF):
        message = f"{CUT_OFF}: {message[:1].lower()}{message[1:]}"
    return ModelError(message, retryable=False, status=error.status)


def retry_after_seconds(exc: BaseException) -> float | None:
    """The server's `Retry-After`, in seconds, when the exception carries the HTTP response's headers."""
    headers: Any = getattr(exc, "litellm_response_headers", None)
    if headers is None:
        headers = getattr(exc, "headers", None) or getattr(getattr(exc, "response", None), "headers", None)
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
