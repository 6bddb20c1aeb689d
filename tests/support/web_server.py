"""A small web server on a loopback address of the test's choosing (Linux routes all of 127.0.0.0/8 to loopback),
for the `fetch` tool's tests: pages of each kind, redirects, big and slow answers, and the headers each request
carried.

    /page            an HTML page (a title, a heading, code, a link, a script that must not reach the model)
    /text /json /md  text/plain, application/json, text/markdown
    /image           image/png bytes
    /big?kb=N        N KiB of text/plain (line after line)
    /long?kb=N       an HTML page of N KiB: numbered paragraphs ("Paragraph 7: ..."), each a block of its own
    /loop/N          a redirect to /loop/N+1, for ever
    /redirect?to=U   a redirect to U
    /headers         the request's headers, as JSON
    /drip            the headers, then one byte every 0.2 s until the client leaves
    /hang            nothing at all, until the server stops
"""

from __future__ import annotations

import json
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

PAGE = """<!doctype html>
<html><head><title>Widget docs</title><style>body { color: red }</style>
<script>document.write("SCRIPT TEXT")</script></head>
<body><nav>Home | Docs</nav>
<h1>Widgets</h1>
<p>A <strong>widget</strong> turns. See <a href="/text">the notes</a>.</p>
<pre><code>widget.turn(3)</code></pre>
<ul><li>first</li><li>second</li></ul>
</body></html>
"""


@dataclass(frozen=True)
class Seen:
    path: str
    headers: dict[str, str]


class WebServer:
    """`tls`: serve HTTPS with that context; `server_names` then holds the name each client's TLS asked for."""

    def __init__(self, host: str = "127.0.0.1", tls: ssl.SSLContext | None = None) -> None:
        self.host = host
        self.seen: list[Seen] = []
        self.server_names: list[str | None] = []
        self._stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:  # quiet
                return

            def do_GET(self) -> None:
                server.seen.append(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}))
                server.answer(self)

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: object, client_address: object) -> None:  # a refused handshake: quiet
                return

        self._server = Server((host, 0), Handler)
        self._server.daemon_threads = True
        if tls is not None:
            tls.sni_callback = lambda _socket, name, _context: self.server_names.append(name)
            # the handshake in the request's thread, not in the accepting one
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True, do_handshake_on_connect=False)
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="web-server", daemon=True)

    def url(self, path: str = "/") -> str:
        scheme = "https" if isinstance(self._server.socket, ssl.SSLSocket) else "http"
        return f"{scheme}://{self.host}:{self.port}{path}"

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(handler.path)
        query = parse_qs(parts.query)
        path = parts.path
        if path == "/page":
            self._send(handler, 200, "text/html; charset=utf-8", PAGE.encode())
        elif path == "/text":
            self._send(handler, 200, "text/plain; charset=utf-8", b"plain notes\nline two\n")
        elif path == "/json":
            self._send(handler, 200, "application/json", b'{"name": "widget", "sizes": [1, 2]}')
        elif path == "/md":
            self._send(handler, 200, "text/markdown", b"# Title\n\n*as is*\n")
        elif path == "/image":
            self._send(handler, 200, "image/png", b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 64)
        elif path == "/big":
            size = int(query.get("kb", ["64"])[0]) * 1024
            line = b"0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 .....\n"
            body = (line * (size // len(line) + 1))[:size]
            self._send(handler, 200, "text/plain", body)
        elif path == "/long":
            size = int(query.get("kb", ["64"])[0]) * 1024
            paragraphs, total, number = [], 0, 0
            while total < size:
                paragraphs.append(f"<div><p>Paragraph {number}: <em>some</em> words about widgets.</p></div>\n")
                total += len(paragraphs[-1])
                number += 1
            page = "<html><head><title>Long</title></head><body><main>" + "".join(paragraphs) + "</main></body></html>"
            self._send(handler, 200, "text/html", page.encode())
        elif path.startswith("/loop/"):
            step = int(path.rsplit("/", 1)[1])
            self._redirect(handler, f"/loop/{step + 1}")
        elif path == "/redirect":
            self._redirect(handler, query["to"][0])
        elif path == "/headers":
            headers = {k.lower(): v for k, v in handler.headers.items()}
            self._send(handler, 200, "application/json", json.dumps(headers).encode())
        elif path == "/drip":
            handler.send_response(200)
            handler.send_header("Content-Type", "text/plain")
            handler.send_header("Content-Length", "100000")
            handler.end_headers()
            try:
                while not self._stop.wait(0.2):
                    handler.wfile.write(b"x")
                    handler.wfile.flush()
            except OSError:
                return
        elif path == "/hang":
            self._stop.wait(60)
        else:
            self._send(handler, 404, "text/plain", b"not found")

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, content_type: str, body: bytes) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        try:
            handler.wfile.write(body)
        except OSError:  # the client stopped reading (a cap): fine
            return

    @staticmethod
    def _redirect(handler: BaseHTTPRequestHandler, location: str) -> None:
        handler.send_response(302)
        handler.send_header("Location", location)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    def paths(self) -> list[str]:
        return [seen.path for seen in self.seen]

    def start(self) -> WebServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()
        deadline = time.monotonic() + 5
        self._thread.join(max(0.0, deadline - time.monotonic()))


@contextmanager
def web_server(host: str = "127.0.0.1", tls: ssl.SSLContext | None = None) -> Iterator[WebServer]:
    server = WebServer(host, tls).start()
    try:
        yield server
    finally:
        server.stop()
