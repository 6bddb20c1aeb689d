"""One HTTP/1.1 POST and its streamed response over a plain socket: the early first call's transport. Stdlib only.

The first model call of a process is sent before the runtime (and httpx) is imported (`llm.early_call`); the
runtime then reads the rest of the same response (`llm.adopted`). So the reader is incremental: `fill()` when
the caller waited on the socket itself (`select`, with other inputs), or `fill_blocking()`, which waits up to
the stall timeout; `head()` and `body()` parse what came.

Bodies come chunked (as every streaming provider sends them), with a Content-Length, or until the server
closes. Every body byte decoded is also kept (`seen`), so the runtime can parse the stream from its start.
"""

from __future__ import annotations

import socket
import time
import urllib.parse
from typing import Any

MAX_HEAD = 64 * 1024


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


def post(url: str, headers: dict[str, str], body: bytes, timeout: float, tls: Any = None) -> RawResponse:
    """Connect and send `body`; the response to read. Raises `OSError` when the server cannot be reached.

    `tls`: an `ssl.SSLContext` for https URLs (required for them).
    """
    parts = urllib.parse.urlsplit(url)
    https = parts.scheme == "https"
    if parts.scheme not in ("http", "https") or not parts.hostname or (https and tls is None):
        raise ValueError(f"cannot post to {url}")
    port = parts.port or (443 if https else 80)
    sock = socket.create_connection((parts.hostname, port), timeout=timeout)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if https:
            sock = tls.wrap_socket(sock, server_hostname=parts.hostname)
        host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
        if parts.port is not None:
            host = f"{host}:{parts.port}"
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        lines = [f"POST {target} HTTP/1.1", f"Host: {host}", "Accept-Encoding: identity", "Connection: close"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        lines.append(f"Content-Length: {len(body)}")
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
    except BaseException:
        sock.close()
        raise
    return RawResponse(sock, timeout)
