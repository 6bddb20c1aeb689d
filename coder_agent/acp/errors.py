"""JSON-RPC / ACP errors: one exception type with named constructors, mapped to the wire in one place."""

from __future__ import annotations

from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
AUTH_REQUIRED = -32000
RESOURCE_NOT_FOUND = -32002
REQUEST_CANCELLED = -32800


class RequestError(Exception):
    """An error that becomes a JSON-RPC error object: `{code, message, data?}`."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_wire(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        data = with_details(self.data, self.message)
        if data is not None:
            error["data"] = data
        return error

    @classmethod
    def parse_error(cls, detail: str) -> RequestError:
        return cls(PARSE_ERROR, "Parse error", {"detail": detail})

    @classmethod
    def invalid_request(cls, detail: str) -> RequestError:
        return cls(INVALID_REQUEST, "Invalid request", {"detail": detail})

    @classmethod
    def method_not_found(cls, method: str) -> RequestError:
        return cls(METHOD_NOT_FOUND, f"Method not found: {method}", {"method": method})

    @classmethod
    def invalid_params(cls, message: str, data: Any = None) -> RequestError:
        return cls(INVALID_PARAMS, message, data)

    @classmethod
    def internal_error(cls, message: str = "Internal error", data: Any = None) -> RequestError:
        return cls(INTERNAL_ERROR, message, data)

    @classmethod
    def session_not_found(cls, session_id: str) -> RequestError:
        return cls(RESOURCE_NOT_FOUND, f"Unknown session: {session_id}", {"sessionId": session_id})

    @classmethod
    def cancelled(cls, detail: str = "Request cancelled") -> RequestError:
        return cls(REQUEST_CANCELLED, detail)

    @classmethod
    def from_wire(cls, error: Any) -> RequestError:
        """A peer's error object; its `data` detail, when it gives one, joins the message (that is the why)."""
        if isinstance(error, dict):
            code = error.get("code")
            message = error.get("message")
            text = message if isinstance(message, str) and message else "Unknown error"
            detail = _detail(error.get("data"))
            if detail and detail not in text:
                text = f"{text}: {detail}"
            return cls(code if isinstance(code, int) else INTERNAL_ERROR, text, error.get("data"))
        return cls(INTERNAL_ERROR, "Malformed error from peer", error)


def _detail(data: Any) -> str | None:
    """The human-readable reason in an error's `data`, as clients put it (`details`, `detail`, `message` ...)."""
    if isinstance(data, str):
        return data.strip() or None
    if isinstance(data, dict):
        for key in ("details", "detail", "message", "reason", "error"):
            value = data.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
    return None


def with_details(data: Any, message: str) -> Any:
    """`data` with the human text in `details` too: Toad and the TypeScript SDK's clients show
    `error.data.details` (and, without it, a generic "the agent failed to start"); other clients show
    `message`. A `detail` already in `data` joins the text. Data that is not an object (pydantic's list of
    validation errors) is left as it is: a client reads it as it is."""
    if data is None:
        return {"details": message}
    if not isinstance(data, dict) or isinstance(data.get("details"), str):
        return data
    detail = _detail(data)
    text = f"{message}: {detail}" if detail and detail not in message else message
    return {**data, "details": text}


class ConnectionClosed(RequestError):
    """The peer went away while we waited for its answer."""

    def __init__(self) -> None:
        super().__init__(INTERNAL_ERROR, "Connection closed")
