"""Who may talk to the server: a bearer token on every request to `/acp`, and, from browsers, only known origins.

The token is compared in constant time. A browser sends `Origin` on every WebSocket handshake and on cross-site
requests: it must be the server's own address (the `Host` it was reached at) or one the user allowed. Clients
that are not browsers send no `Origin` and are judged by the token alone.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


def new_token() -> str:
    return secrets.token_urlsafe(32)


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _origin_key(origin: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an origin such as `https://ide.example.com`; None if it is not one."""
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return None
    if not parts.scheme or not parts.hostname:
        return None
    scheme = parts.scheme.lower()
    return scheme, parts.hostname.lower(), port or _DEFAULT_PORTS.get(scheme, 0)


def _host_key(host: str) -> tuple[str, int | None] | None:
    """(host, port) of a `Host` header."""
    try:
        parts = urlsplit(f"//{host.strip()}")
        return (parts.hostname or "").lower(), parts.port
    except ValueError:
        return None


@dataclass(frozen=True)
class Denied:
    status: int
    message: str


class Gate:
    def __init__(self, token: str, allowed_origins: Iterable[str]) -> None:
        self._token = token.encode()
        self._origins = {key for origin in allowed_origins if (key := _origin_key(origin)) is not None}

    def check(self, headers: Mapping[str, str]) -> Denied | None:
        """Why a request to `/acp` with these headers is refused; None if it may go on."""
        origin = headers.get("origin")
        if origin is not None and not self.origin_allowed(origin, headers.get("host")):
            return Denied(403, f"origin {origin!r} is not allowed (coder-agent serve --allow-origin)")
        if not self._token_matches(headers.get("authorization")):
            return Denied(401, "missing or wrong bearer token (send 'Authorization: Bearer <token>')")
        return None

    def _token_matches(self, authorization: str | None) -> bool:
        scheme, _, value = (authorization or "").strip().partition(" ")
        given = value.strip().encode() if scheme.lower() == "bearer" else b""
        return hmac.compare_digest(given, self._token)

    def origin_allowed(self, origin: str, host: str | None) -> bool:
        key = _origin_key(origin)
        if key is None:
            return False  # "null" (a sandboxed page, a file) or garbage
        if key in self._origins:
            return True
        own = _host_key(host) if host else None
        if own is None:
            return False
        scheme, origin_host, origin_port = key
        own_host, own_port = own
        return origin_host == own_host and origin_port == (own_port or _DEFAULT_PORTS.get(scheme, 0))
