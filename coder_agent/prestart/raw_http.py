"""One HTTP/1.1 POST and its streamed response over a plain socket: the early first call's transport. Stdlib only.

The first model call of a process is sent before the runtime (and httpx) is imported (`llm.early_call`); the
runtime then reads the rest of the same response (`llm.adopted`). So the reader is incremental: `fill()` when
the caller waited on the socket itself (`select`, with other inputs), or `fill_blocking()`, which waits up to
the stall timeout; `head()` and `body()` parse what came.

Bodies come chunked (as every streaming provider sends them), with a Content-Length, or until the server
closes. Every body byte decoded is also kept (`seen`), so the runtime can parse the stream from its start.

Reaching the server (name resolution, the TCP connect, the TLS handshake, sending the request) is bounded by
`CONNECT_TIMEOUT` in all, apart from the request's own timeout, and never blocks beyond what the caller's `wait`
allows: the early stage waits on stdin and on the runtime too, so a server that accepts and never answers does
not freeze the agent.
"""

from __future__ import annotations

import errno
import os
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable
from typing import Any

MAX_HEAD = 64 * 1024
CONNECT_TIMEOUT = 10.0  # to resolve, connect, shake hands and send the request: longer means the server is not there

# wait(fd, for_write, seconds): True once `fd` is ready, None when the seconds passed first, False to give up now
# (the caller has something else to do): `post` then raises `Interrupted`.
Wait = Callable[[int, bool, float], "bool | None"]


class Interrupted(Exception):
    """The caller's `wait` gave up before the request was sent."""


class HttpProtocolError(Exception):
    """The response is not HTTP/1.x as we read it, or the body ended before it was complete."""


class RawResponse:
    def __init__(self, sock: socket.socket, timeout: float) -> None:
        self.sock = sock
        self.timeout = timeout  # seconds without data before a read fails (a stall)
        self.last_data = time.monotonic()
        self.status = 0
        self.reason = ""
        self.headers: dict[str, str] = {}  # names in lower case
        self.seen = bytearray()  # every body byte decoded so far
        self.eof = False  # the server closed the connection
        self.done = False  # the body is complete
        self._raw = bytearray()  # received, not decoded yet
        self._head_done = False
        self._chunked = False
        self._left: int | None = None  # bytes left in the current chunk, or of the Content-Length body
        self._after_chunk = False  # the CRLF after a chunk's data is next

    # -- driving the socket

    def fill(self) -> bool:
        """One `recv` (blocking up to the stall timeout); False when the server closed the connection."""
        data = self.sock.recv(65536)
        if not data:
            self.eof = True
            return False
        self.last_data = time.monotonic()
        self._raw += data
        return True

    def buffered(self) -> bool:
        """Data is waiting where `select` cannot see it (decoded-but-unread bytes, or TLS's own buffer)."""
        pending = getattr(self.sock, "pending", None)
        return bool(self._raw) or (pending is not None and pending() > 0)

    def stall_left(self) -> float:
        return max(0.0, self.timeout - (time.monotonic() - self.last_data))

    # -- parsing

    def head(self) -> bool:
        """Parse the status line and headers if they are all in; True once they are."""
        if self._head_done:
            return True
        end = self._raw.find(b"\r\n\r\n")
        if end < 0:
            if len(self._raw) > MAX_HEAD:
                raise HttpProtocolError("the response headers are too long")
            if self.eof:
                raise HttpProtocolError("the server closed the connection before answering")
            return False
        lines = bytes(self._raw[:end]).decode("latin-1").split("\r\n")
        del self._raw[: end + 4]
        version, _, rest = lines[0].partition(" ")
        code, _, reason = rest.partition(" ")
        if not version.startswith("HTTP/1.") or not code.isdigit():
            raise HttpProtocolError(f"not an HTTP/1.x response: {lines[0][:80]!r}")
        self.status, self.reason = int(code), reason.strip()
        for line in lines[1:]:
            name, colon, value = line.partition(":")
            if colon:
                key = name.strip().lower()
                value = value.strip()
                self.headers[key] = f"{self.headers[key]}, {value}" if key in self.headers else value
        self._chunked = "chunked" in self.headers.get("transfer-encoding", "").lower()
        length = self.headers.get("content-length")
        if not self._chunked and length is not None and length.strip().isdigit():
            self._left = int(length)
            self.done = self._left == 0
        self._head_done = True
        return True

    def body(self) -> bytes:
        """The body bytes decodable from what was received (b"" when none yet, or when the body is done)."""
        if not self._head_done or self.done:
            return b""
        if not self._chunked:
            if self._left is None:  # until the server closes
                data = bytes(self._raw)
                self._raw.clear()
                if self.eof:
                    self.done = True
            else:
                data = bytes(self._raw[: self._left])
                del self._raw[: len(data)]
                self._left -= len(data)
                self.done = self._left == 0
                if not self.done and self.eof:
                    raise HttpProtocolError("the server closed the connection before the body was complete")
            self.seen += data
            return data
        out = bytearray()
        while True:
            if self._after_chunk:
                if len(self._raw) < 2:
                    break
                if self._raw[:2] != b"\r\n":
                    raise HttpProtocolError("a chunk of the body is not followed by CRLF")
                del self._raw[:2]
                self._after_chunk = False
            if self._left:
                piece = self._raw[: self._left]
                if not piece:
                    break
                out += piece
                del self._raw[: len(piece)]
                self._left -= len(piece)
                if self._left == 0:
                    self._after_chunk = True
                continue
            end = self._raw.find(b"\r\n")
            if end < 0:
                break
            size_text = bytes(self._raw[:end]).split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise HttpProtocolError(f"a chunk size that is not a number: {size_text[:20]!r}") from None
            del self._raw[: end + 2]
            if size == 0:  # the last chunk; trailers, if any, are not read
                self.done = True
                break
            self._left = size
        if not self.done and self.eof and not out:
            raise HttpProtocolError("peer closed connection without sending complete message body")
        self.seen += out
        return bytes(out)

    def fill_blocking(self) -> bool:
        """`fill`, waiting at most what is left of the stall timeout (`TimeoutError` then)."""
        self.sock.settimeout(max(0.001, self.stall_left()))
        return self.fill()

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


def _select(fd: int, for_write: bool, seconds: float) -> bool | None:
    import select

    readable, writable, _ = select.select([] if for_write else [fd], [fd] if for_write else [], [], seconds)
    return True if readable or writable else None


def post(
    url: str,
    headers: dict[str, str],
    body: bytes,
    timeout: float,
    tls: Any = None,
    *,
    connect_timeout: float = CONNECT_TIMEOUT,
    wait: Wait = _select,
) -> RawResponse:
    """Connect and send `body`; the response to read (each read then waits up to `timeout`). Raises `OSError`
    when the server cannot be reached (`TimeoutError` after `connect_timeout`), `Interrupted` when `wait` gave up.

    `tls`: an `ssl.SSLContext` for https URLs (required for them).
    """
    parts = urllib.parse.urlsplit(url)
    https = parts.scheme == "https"
    if parts.scheme not in ("http", "https") or not parts.hostname or (https and tls is None):
        raise ValueError(f"cannot post to {url}")
    port = parts.port or (443 if https else 80)
    limit = min(connect_timeout, timeout)
    deadline = time.monotonic() + limit

    def ready(fd: int, for_write: bool) -> None:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{parts.hostname}:{port} did not answer within {limit:g} s")
            state = wait(fd, for_write, left)
            if state:
                return
            if state is False:
                raise Interrupted()

    sock = _connect(_resolve(parts.hostname, port, ready), ready)
    try:
        if https:
            sock = _handshake(
                tls.wrap_socket(sock, server_hostname=parts.hostname, do_handshake_on_connect=False), ready
            )
        host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
        if parts.port is not None:
            host = f"{host}:{parts.port}"
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        lines = [f"POST {target} HTTP/1.1", f"Host: {host}", "Accept-Encoding: identity", "Connection: close"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        lines.append(f"Content-Length: {len(body)}")
        _send_all(sock, ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body, ready)
        sock.settimeout(timeout)  # from now on blocking reads, each up to the stall timeout
    except BaseException:
        sock.close()
        raise
    return RawResponse(sock, timeout)


Ready = Callable[[int, bool], None]  # returns once the fd is ready; raises TimeoutError or Interrupted


def _resolve(host: str, port: int, ready: Ready) -> list[Any]:
    """`getaddrinfo`'s answers. It has no timeout of its own and blocks in C, so a name is looked up in a thread
    the caller waits for as for a socket (a hung resolver is left behind; an address needs no look-up)."""
    try:
        return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST)
    except socket.gaierror:
        pass
    done_read, done_write = os.pipe()
    found: list[Any] = []

    def look_up() -> None:
        try:
            found.append(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except OSError as exc:
            found.append(exc)
        finally:
            try:
                os.write(done_write, b"!")  # EPIPE once the caller gave up (SIGPIPE is ignored in Python)
            except OSError:
                pass
            os.close(done_write)  # this thread's alone: closed by the caller, its number could be reused first

    threading.Thread(target=look_up, name="resolve", daemon=True).start()
    try:
        ready(done_read, False)
    finally:
        os.close(done_read)
    if isinstance(found[0], OSError):
        raise found[0]
    addresses: list[Any] = found[0]
    return addresses


def _connect(addresses: list[Any], ready: Ready) -> socket.socket:
    """A connected non-blocking socket to the first address that takes one (as `socket.create_connection`)."""
    error: OSError = OSError(errno.EADDRNOTAVAIL, "no address to connect to")
    for family, kind, proto, _name, address in addresses:
        sock = socket.socket(family, kind, proto)
        try:
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            code = sock.connect_ex(address)
            if code in (errno.EINPROGRESS, errno.EAGAIN):
                ready(sock.fileno(), True)
                code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if code:
                raise OSError(code, f"{os.strerror(code)} ({address[0]} port {address[1]})")
            return sock
        except TimeoutError:
            sock.close()
            raise  # the time is up for every address
        except OSError as exc:
            sock.close()
            error = exc
        except BaseException:
            sock.close()
            raise
    raise error


def _handshake(sock: Any, ready: Ready) -> Any:
    import ssl

    while True:
        try:
            sock.do_handshake()
            return sock
        except ssl.SSLWantReadError:
            ready(sock.fileno(), False)
        except ssl.SSLWantWriteError:
            ready(sock.fileno(), True)


def _send_all(sock: Any, data: bytes, ready: Ready) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[sock.send(view) :]
        except BlockingIOError:  # a full send buffer
            ready(sock.fileno(), True)
        except OSError as exc:
            import ssl  # imported already for https (its context); for http, only on this path to an error

            if isinstance(exc, ssl.SSLWantWriteError):
                ready(sock.fileno(), True)
            elif isinstance(exc, ssl.SSLWantReadError):  # renegotiation: the server speaks first
                ready(sock.fileno(), False)
            else:
                raise
