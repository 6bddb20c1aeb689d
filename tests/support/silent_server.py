"""A server that accepts TCP connections and never says a word: what a hostile or broken network looks like to a
client (no TLS handshake, no HTTP answer). It reads what comes, so a test can see a request arrived."""

from __future__ import annotations

import selectors
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class SilentServer:
    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._changed = threading.Condition()
        self._received: list[bytearray] = []  # what each connection sent, in the order they came
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="silent-server", daemon=True)

    def url(self, scheme: str) -> str:
        """The API base a client is pointed at: `http://127.0.0.1:PORT/v1` or `https://...`."""
        return f"{scheme}://127.0.0.1:{self.port}/v1"

    def _serve(self) -> None:
        selector = selectors.DefaultSelector()
        selector.register(self._listener, selectors.EVENT_READ)
        connections: list[socket.socket] = []
        try:
            while not self._stop.is_set():
                for key, _ in selector.select(0.05):
                    if key.fileobj is self._listener:
                        connection, _ = self._listener.accept()
                        connections.append(connection)
                        with self._changed:
                            self._received.append(bytearray())
                            self._changed.notify_all()
                        selector.register(connection, selectors.EVENT_READ, len(self._received) - 1)
                        continue
                    assert isinstance(key.fileobj, socket.socket)
                    data = key.fileobj.recv(65536)
                    if not data:
                        selector.unregister(key.fileobj)
                        continue
                    with self._changed:
                        self._received[key.data] += data
                        self._changed.notify_all()
        finally:
            for connection in connections:
                connection.close()
            selector.close()

    def received(self) -> list[bytes]:
        with self._changed:
            return [bytes(data) for data in self._received]

    def _came(self, what: str) -> bool:
        heads = (b"\r\n\r\n" in data for data in self._received)
        return bool(self._received) and (what == "connection" or any(heads))

    def wait_for(self, what: str, timeout: float) -> list[bytes]:
        """Until a connection came (`what="connection"`) or a whole HTTP request head arrived (`"request"`)."""
        with self._changed:
            if not self._changed.wait_for(lambda: self._came(what), timeout):
                raise TimeoutError(f"no {what} reached the silent server within {timeout} s")
            return [bytes(data) for data in self._received]


@contextmanager
def silent_server() -> Iterator[SilentServer]:
    server = SilentServer()
    server._thread.start()
    try:
        yield server
    finally:
        server._stop.set()
        server._thread.join(5)
        server._listener.close()
