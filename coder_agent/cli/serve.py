"""`coder-agent serve`: the command line. Binds, says where and with which token to connect, serves until Ctrl-C."""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import socket
import sys

from .. import __version__
from ..kit import masking
from ..remote.options import ServeOptions

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
# The kernel's send buffer of each accepted connection (inherited from the listening socket; Linux doubles it).
# Left alone, Linux grows it up to net.ipv4.tcp_wmem's maximum (4 MiB by default) for a client that reads
# nothing: capped, what a stuck client can hold in the server's memory is known (README, "Limits").
SOCKET_SEND_BUFFER = 128 * 1024
EXTRA_HINT = "coder-agent serve needs the serve extra: pip install 'coder-agent[serve]'\n"

log = logging.getLogger(__name__)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="coder-agent serve",
        description=(
            "Serve the agent to remote ACP clients on /acp: WebSocket, and Streamable HTTP (POST, SSE GET, "
            "DELETE). Every request to /acp needs the bearer token (CODER_AGENT_SERVE_TOKEN, else one made now "
            "and shown once). Plain HTTP: put a TLS reverse proxy in front for anything but this machine."
        ),
    )
    p.add_argument("--host", default=DEFAULT_HOST, help=f"address to bind (default {DEFAULT_HOST})")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port to bind (default {DEFAULT_PORT})")
    p.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a browser origin allowed besides the server's own, e.g. https://ide.example.com (repeatable; "
        "also CODER_AGENT_SERVE_ORIGINS)",
    )
    p.add_argument(
        "--max-connections",
        type=int,
        default=ServeOptions.max_connections,
        help=f"connections open at once; more are refused with 503 (default {ServeOptions.max_connections})",
    )
    p.add_argument(
        "--header-timeout",
        type=float,
        default=ServeOptions.header_timeout,
        metavar="SECONDS",
        help="a client must send a whole request head within this long, or its TCP connection is closed "
        f"(default {ServeOptions.header_timeout:g})",
    )
    return p


def raise_open_files_limit() -> tuple[int, int] | None:
    """Raise the soft limit of open files to the hard one (each connection is one); the limits before, if raised.

    The default soft limit is often 1,024: the connections that have not shown the token are bounded well below
    it (README, "Limits"), and token holders get the rest.
    """
    try:
        import resource
    except ImportError:  # not on Windows
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft == resource.RLIM_INFINITY or soft >= hard:
        return None
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ValueError, OSError):
        return None
    return soft, hard


def bind(host: str, port: int) -> socket.socket:
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SOCKET_SEND_BUFFER)
    try:
        sock.bind(address)
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def _url(scheme: str, sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}:{port}"


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    if not all(importlib.util.find_spec(name) for name in ("starlette", "uvicorn", "websockets")):
        sys.stderr.write(EXTRA_HINT)
        return 2

    from ..llm.loader import OFFLINE_ENV

    for key, value in OFFLINE_ENV.items():
        os.environ.setdefault(key, value)

    import anyio

    from ..config.settings import Settings
    from ..kit.logs import setup_logging
    from ..remote.security import is_loopback, new_token
    from ..remote.server import RemoteServer

    settings = Settings.load(lenient=True)
    log_file = setup_logging(settings.log_level, settings.log_dir)
    for name, problem in settings.problems.items():
        log.error("%s: %s; requests that need it will be refused until it is fixed", name, problem)
    raised = raise_open_files_limit()
    if raised is not None:
        log.info("open files: soft limit raised from %d to the hard limit, %d", *raised)
    try:
        sock = bind(args.host, args.port)
    except OSError as exc:
        sys.stderr.write(f"coder-agent serve: cannot listen on {args.host}:{args.port}: {exc}\n")
        return 1
    token = settings.serve_token or new_token()
    base = _url("http", sock)
    sys.stderr.write(
        f"coder-agent {__version__} serving ACP on {base}/acp (WebSocket: {_url('ws', sock)}/acp; "
        f"health: {base}/health; log: {log_file})\n"
    )
    if settings.serve_token:
        sys.stderr.write("clients authenticate with the token in CODER_AGENT_SERVE_TOKEN\n")
    else:  # shown here once, never logged
        sys.stderr.write(f"token (shown once; clients send 'Authorization: Bearer <token>'): {token}\n")
    masking.learn(masking.SERVE_TOKEN_VARIABLE, token)  # only now: masked everywhere from here on
    if not is_loopback(args.host):
        sys.stderr.write(
            f"warning: {args.host} is reachable from other machines and this server speaks plain HTTP: "
            "put a TLS reverse proxy in front of it (see README, 'coder-agent serve')\n"
        )
    options = ServeOptions(max_connections=args.max_connections, header_timeout=args.header_timeout)
    server = RemoteServer(settings, token, args.allow_origin, options, signals=True)
    log.info("coder-agent %s serving on %s (model %s)", __version__, base, settings.model)
    try:
        anyio.run(server.serve, [sock])
    except KeyboardInterrupt:
        pass
    log.info("stopped")
    logging.shutdown()
    return 0
