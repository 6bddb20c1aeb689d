"""The HTTP client of the direct path: httpx, imported and set up in a worker thread, never on the event loop.

httpx is already installed (litellm and the OpenAI SDK depend on it); it honours HTTPS_PROXY, NO_PROXY and
SSL_CERT_FILE from the environment, as litellm's own client does. Importing it, loading the CA bundle and
building a first client cost ~100-300 ms, so `prepare()` runs in the background right after a session
exists. Each event loop then gets its own client (connections belong to a loop), built in well under a
millisecond from the prepared TLS context, and kept for the loop's life so connections stay alive.
"""

from __future__ import annotations

import sys
import threading
import types
from typing import TYPE_CHECKING

from anyio.lowlevel import RunVar

if TYPE_CHECKING:
    import ssl

    import httpx

_lock = threading.Lock()
_tls: ssl.SSLContext | None = None
_clients: RunVar[httpx.AsyncClient] = RunVar("coder_agent_http_client")


def _new_client(tls: ssl.SSLContext) -> httpx.AsyncClient:
    import httpx

    # Timeouts are set per request (the model's stall timeout); no redirects, as litellm.
    return httpx.AsyncClient(verify=tls, timeout=None, follow_redirects=False)


def _without_command_line() -> None:
    """Keep httpx's command-line client out: httpx's `__init__` imports it (click, rich, pygments) whenever those
    are installed, as litellm's dependencies make them, and it costs ~100 ms of the first model call's wait.
    The agent never runs `httpx` as a command; `httpx.main` is a stub that says so."""
    if "httpx" in sys.modules or "httpx._main" in sys.modules:
        return
    stub = types.ModuleType("httpx._main", "httpx's command line, left out by coder-agent")

    def main() -> None:
        raise SystemExit("httpx's command line is not loaded in coder-agent")

    stub.main = main  # type: ignore[attr-defined]
    sys.modules["httpx._main"] = stub


def prepare() -> ssl.SSLContext:
    """Import httpx and load the TLS context once (thread-safe; blocking: call it from a worker thread)."""
    global _tls
    tls = _tls
    if tls is None:
        with _lock:
            tls = _tls
            if tls is None:
                _without_command_line()
                import httpx

                tls = httpx.create_ssl_context(trust_env=True)
                _new_client(tls)  # the first client imports and sets up the rest of httpx's transport
                _tls = tls
    return tls


def prepared() -> bool:
    return _tls is not None


def client() -> httpx.AsyncClient:
    """The current event loop's client. Call `prepare()` (in a worker thread) first."""
    if _tls is None:
        raise RuntimeError("http_client.prepare() has not run")
    try:
        return _clients.get()
    except LookupError:
        new = _new_client(_tls)
        _clients.set(new)
        return new
