"""The HTTP entry point."""

from __future__ import annotations

from http.server import HTTPServer, SimpleHTTPRequestHandler

from app import settings


def serve() -> None:
    HTTPServer(("127.0.0.1", settings.port()), SimpleHTTPRequestHandler).serve_forever()
