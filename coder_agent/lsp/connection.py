"""JSON-RPC with one language server over its stdio: our requests and notifications, its answers, its requests.

Nothing here waits on the server without a bound its caller sets: a write goes into an outbox that a writer
task drains, so a server that stops reading its input never blocks a caller (a full outbox ends the
connection instead); and a request cancelled by its caller's deadline is forgotten (the server is told with
`$/cancelRequest`). When the server's output ends, every pending request fails at once with `ServerGone`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
from anyio.streams.buffered import BufferedByteReceiveStream

from .framing import FramingError, encode, read_message

log = logging.getLogger(__name__)

OUTBOX = 4096  # messages waiting to be written; a server that lets this many pile up has stopped reading
METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603
# Which requests a server may ask again for (LSP: ContentModified, ServerCancelled).
RETRY_CODES = (-32801, -32802)


class ServerGone(Exception):
    """The server's connection ended (it exited, closed its output, or broke the protocol)."""


class LspError(Exception):
    """The server answered a request with an error."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message


# (method, params) -> the result of a request the server sends us; raise LspError to answer with an error
RequestHandler = Callable[[str, Any], Any]
NotificationHandler = Callable[[str, Any], None]


@dataclass
class _Pending:
    done: anyio.Event = field(default_factory=anyio.Event)
    result: Any = None
    error: Exception | None = None


class Connection:
    def __init__(
        self,
        receive: anyio.abc.ByteReceiveStream,
        send: anyio.abc.ByteSendStream,
        on_request: RequestHandler,
        on_notification: NotificationHandler,
    ) -> None:
        self._receive = BufferedByteReceiveStream(receive)
        self._send_stream = send
        self._on_request = on_request
        self._on_notification = on_notification
        self._outbox, self._outgoing = anyio.create_memory_object_stream[bytes](OUTBOX)
        self._pending: dict[int, _Pending] = {}
        self._next_id = 0
        self.ended: str | None = None  # why the connection ended

    async def serve(self) -> None:
        """Read and write until the server's output ends or breaks; then every pending request fails."""
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(self._write_all)
                await self._read_all()
                tasks.cancel_scope.cancel()
        finally:
            self._end(self.ended or "the connection was closed")

    def notify(self, method: str, params: Any) -> None:
        self._post({"jsonrpc": "2.0", "method": method, "params": params})

    async def request(self, method: str, params: Any) -> Any:
        """The result; raises `LspError` (the server's error), `ServerGone`. The caller bounds the wait."""
        self._next_id += 1
        request_id = self._next_id
        pending = self._pending[request_id] = _Pending()
        try:
            self._post({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            await pending.done.wait()
        finally:
            if self._pending.pop(request_id, None) is not None and not pending.done.is_set() and self.ended is None:
                try:  # the caller stopped waiting: the server may stop working on it
                    self.notify("$/cancelRequest", {"id": request_id})
                except ServerGone:
                    pass
        if pending.error is not None:
            raise pending.error
        return pending.result

    def _post(self, message: dict[str, Any]) -> None:
        if self.ended is not None:
            raise ServerGone(self.ended)
        try:
            self._outbox.send_nowait(encode(message))
        except anyio.WouldBlock:
            self._end(f"it stopped reading its input ({OUTBOX} messages waiting)")
            raise ServerGone(self.ended or "") from None

    async def _write_all(self) -> None:
        try:
            async for data in self._outgoing:
                await self._send_stream.send(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            self._end(f"its input is closed ({type(exc).__name__})")

    async def _read_all(self) -> None:
        while self.ended is None:
            try:
                message = await read_message(self._receive)
            except (anyio.EndOfStream, anyio.IncompleteRead, anyio.ClosedResourceError, anyio.BrokenResourceError):
                self._end("its output ended")
                return
            except FramingError as exc:
                self._end(f"it sent {exc}")
                return
            self._dispatch(message)

    def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if isinstance(method, str):
            if "id" in message:
                self._answer(message["id"], method, message.get("params"))
            else:
                try:
                    self._on_notification(method, message.get("params"))
                except Exception:  # one odd notification must not end the connection
                    log.exception("a language server's %s could not be handled", method)
            return
        pending = self._pending.get(message["id"]) if isinstance(message.get("id"), int) else None
        if pending is None:
            return  # the answer to a request its caller gave up on
        error = message.get("error")
        if isinstance(error, dict):
            pending.error = LspError(int(error.get("code") or INTERNAL_ERROR), str(error.get("message") or ""))
        else:
            pending.result = message.get("result")
        pending.done.set()

    def _answer(self, request_id: Any, method: str, params: Any) -> None:
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
        try:
            reply["result"] = self._on_request(method, params)
        except LspError as exc:
            reply["error"] = {"code": exc.code, "message": exc.message}
        except Exception as exc:
            log.exception("a language server's %s could not be answered", method)
            reply["error"] = {"code": INTERNAL_ERROR, "message": f"{type(exc).__name__}: {exc}"}
        try:
            self._post(reply)
        except ServerGone:
            pass

    def _end(self, why: str) -> None:
        if self.ended is None:
            self.ended = why
        self._outbox.close()
        for pending in self._pending.values():
            if not pending.done.is_set():
                pending.error = ServerGone(self.ended)
                pending.done.set()
