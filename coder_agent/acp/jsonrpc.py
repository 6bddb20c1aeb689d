"""JSON-RPC 2.0 over newline-delimited JSON on a pair of anyio byte streams.

One reader task parses lines and dispatches: each incoming request runs in its own task (so a
`session/cancel` is handled while a `session/prompt` runs, and a handler may await an answer from the
peer while the reader keeps reading); notifications are handled inline, in order. Outgoing messages are
written whole, one at a time, in the order they were sent, every known secret masked (`masking`) but in the
requests the peer acts on (`request(verbatim=True)`).
"""

from __future__ import annotations

import itertools
import json
import logging
import math
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio
import anyio.abc
import anyio.lowlevel

from ..kit.masking import mask_bytes
from ..kit.unicode import INVALID_UNICODE, decode_line, dumps, find_invalid, scrub_value
from .errors import ConnectionClosed, RequestError
from .lines import LineTooLong, read_lines

log = logging.getLogger(__name__)

JsonDict = dict[str, Any]


AfterReply = Callable[[], Awaitable[None]]
_after_reply: ContextVar[list[AfterReply] | None] = ContextVar("after_reply", default=None)
_request_id: ContextVar[int | str | None] = ContextVar("request_id", default=None)


def current_request_id() -> int | str | None:
    """The id of the request being handled (what a request-scoped `elicitation/create` names); None outside a
    request a connection dispatched."""
    return _request_id.get()


def after_reply(callback: AfterReply) -> bool:
    """Run `callback` right after the reply to the request being handled is written, if it succeeded.

    For what a client must see only once it has the reply (ACP: `available_commands_update` after the
    `session/new` result). The callbacks run in order, in the request's task. Returns False, and schedules
    nothing, outside a request a connection dispatched (a handler called directly, as the headless run does).
    """
    callbacks = _after_reply.get()
    if callbacks is None:
        return False
    callbacks.append(callback)
    return True


class Dispatcher(Protocol):
    """What the connection hands incoming messages to."""

    async def handle_request(self, method: str, params: Any) -> Any: ...

    async def handle_notification(self, method: str, params: Any) -> None: ...


@dataclass
class _Pending:
    done: anyio.Event = field(default_factory=anyio.Event)
    result: Any = None
    error: RequestError | None = None


def _id_key(request_id: Any) -> str:
    # 1 and "1" are different ids in JSON-RPC.
    return json.dumps(request_id)


_INVALID_ID = object()  # stands in for an id holding invalid Unicode
# A string id longer than this is refused: it would be kept (and echoed) for the request's whole life.
MAX_ID_LENGTH = 256


def _drop_frames(error: BaseException | None) -> None:
    """Let go of the frames an answered error went through, and of what they hold (a request's params: they may be
    megabytes).

    A frame that raised an error it holds (`raise problem`) makes a cycle with it through the traceback: those
    frames and their locals would stay until the cyclic GC happens to run, which a few large objects do not
    prompt. Dropping the tracebacks breaks the cycles (clearing the frames instead could finalize a coroutine
    that is only suspended).
    """
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        error.__traceback__ = None
        error = error.__cause__ or error.__context__


def valid_id(value: Any) -> bool:
    if isinstance(value, str):
        return len(value) <= MAX_ID_LENGTH
    return value is None or (isinstance(value, int) and not isinstance(value, bool))


class Connection:
    """A JSON-RPC peer. `serve()` runs until the input ends; `request()`/`notify()` talk to the other side."""

    def __init__(
        self,
        receive: anyio.abc.ByteReceiveStream,
        send: anyio.abc.ByteSendStream,
        dispatcher: Dispatcher,
        *,
        max_line_bytes: int = 64 * 1024 * 1024,
        eof_grace: float = 0.5,
    ) -> None:
        self._receive = receive
        self._send = send
        self._dispatcher = dispatcher
        self._max_line_bytes = max_line_bytes
        self._eof_grace = eof_grace
        self._write_lock = anyio.Lock(fast_acquire=True)  # no event-loop round trip when uncontended
        self._ids = itertools.count(1)
        self._pending: dict[str, _Pending] = {}
        self._withdrawn: dict[str, None] = {}  # ids we cancelled: their late answers are expected, not odd
        self._inflight: dict[str, anyio.CancelScope] = {}
        self._idle = anyio.Event()
        self._closed = False
        self.on_write: Callable[[bytes], None] | None = None  # a tap for tests and benchmarks
        # Called once the input has ended, before requests in flight are given their grace: for what must stop
        # at once rather than be waited for (the turns, which would run on for a client that is gone).
        self.on_input_end: Callable[[], None] | None = None

    # ---- outgoing -------------------------------------------------------------------------------

    async def notify(self, method: str, params: Any = None) -> None:
        message: JsonDict = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._write(message)

    async def request(
        self, method: str, params: Any = None, *, timeout: float | None = None, verbatim: bool = False
    ) -> Any:
        """Send a request and wait for its answer; a peer error is raised as `RequestError`.

        On timeout or cancellation the peer is told with `$/cancel_request`, so it can stop working on it.
        `verbatim`: the request is sent as it is, known secrets and all, because the peer acts on it rather than
        shows it (a file's content to write, which must keep the key it holds).
        """
        if self._closed:
            raise ConnectionClosed()
        request_id = next(self._ids)
        key = _id_key(request_id)
        pending = _Pending()
        self._pending[key] = pending
        message: JsonDict = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            await self._write(message, verbatim)
            with anyio.fail_after(timeout if timeout is not None else math.inf):
                await pending.done.wait()
        except TimeoutError:
            await self._cancel_outgoing(request_id)
            raise RequestError.cancelled(f"{method}: no answer from the client after {timeout:g} s") from None
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await self._cancel_outgoing(request_id)
            raise
        finally:
            self._pending.pop(key, None)
        if pending.error is not None:
            raise pending.error
        return pending.result

    async def _cancel_outgoing(self, request_id: int) -> None:
        self._withdrawn[_id_key(request_id)] = None
        while len(self._withdrawn) > 1000:
            del self._withdrawn[next(iter(self._withdrawn))]
        if not self._closed:
            try:
                await self.notify("$/cancel_request", {"requestId": request_id})
            except Exception:  # the peer is gone; nothing left to tell
                log.debug("could not send $/cancel_request for %s", request_id)

    async def notify_json(self, method: str, params_json: bytes) -> None:
        """Send a notification whose params are already JSON: the streaming hot path."""
        await self._write_line(
            b'{"jsonrpc":"2.0","method":%s,"params":%s}\n' % (json.dumps(method).encode(), params_json)
        )

    async def write_lines(self, data: bytes) -> None:
        """Write already-framed JSON-RPC lines (each one whole and ending in a newline) in one go."""
        await self._write_line(data)

    async def _write(self, message: JsonDict, verbatim: bool = False) -> None:
        await self._write_line(dumps(message) + b"\n", verbatim)

    async def _write_line(self, data: bytes, verbatim: bool = False) -> None:
        if not verbatim:
            data = mask_bytes(data)  # every line the client gets: no known secret, whichever path made it
        async with self._write_lock:
            if self._closed:
                raise ConnectionClosed()
            try:
                await self._send.send(data)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
                self._closed = True
                raise ConnectionClosed() from exc
        if self.on_write is not None:
            self.on_write(data)

    async def _reply(self, request_id: Any, result: Any = None, error: RequestError | None = None) -> None:
        message: JsonDict = {"jsonrpc": "2.0", "id": request_id}
        if error is not None:
            message["error"] = error.to_wire()
        else:
            message["result"] = result if result is not None else {}
        try:
            await self._write(message)
        except ConnectionClosed:
            log.info("could not answer request %r: the connection is closed", request_id)

    # ---- incoming -------------------------------------------------------------------------------

    async def serve(self) -> None:
        """Read and dispatch until the input ends; then let requests in flight finish briefly, and stop."""
        try:
            async with anyio.create_task_group() as tg:
                try:
                    async for line in read_lines(self._receive, self._max_line_bytes):
                        if isinstance(line, LineTooLong):
                            await self._reply(None, error=RequestError.invalid_request(str(line)))
                        else:
                            await self._on_line(line, tg)
                        del line  # not kept while the next one is awaited: it may be megabytes
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    log.info("input stream broke; shutting down")
                log.info("input ended")
                if self.on_input_end is not None:
                    self.on_input_end()
                if self._inflight:
                    with anyio.move_on_after(self._eof_grace):
                        await self._idle.wait()
                tg.cancel_scope.cancel()
        finally:
            self._closed = True
            for pending in self._pending.values():
                pending.error = ConnectionClosed()
                pending.done.set()

    async def _on_line(self, line: bytes, tg: anyio.abc.TaskGroup) -> None:
        text, suspect = decode_line(line)
        try:
            message = json.loads(text)
        except (ValueError, RecursionError) as exc:  # deep nesting recurses
            await self._reply(None, error=RequestError.parse_error(str(exc) or type(exc).__name__))
            return
        if not isinstance(message, dict):
            detail = "batch requests are not supported" if isinstance(message, list) else "not a JSON object"
            await self._reply(None, error=RequestError.invalid_request(detail))
            return
        request_id = message.get("id")
        if suspect and find_invalid(request_id) is not None:
            request_id = _INVALID_ID  # it cannot be echoed: answer as to a request without a usable id
        reply_id = request_id if valid_id(request_id) else None
        if message.get("jsonrpc") != "2.0":
            await self._reply(reply_id, error=RequestError.invalid_request('"jsonrpc" must be "2.0"'))
            return
        method = message.get("method")
        if method is not None:
            params = message.get("params")
            invalid = find_invalid(params) if suspect else None
            if not isinstance(method, str) or not valid_id(request_id):
                long_id = isinstance(request_id, str) and len(request_id) > MAX_ID_LENGTH
                detail = f"the id is longer than {MAX_ID_LENGTH} characters" if long_id else "bad method or id"
                await self._reply(reply_id, error=RequestError.invalid_request(detail))
            elif "id" in message:
                if invalid is not None:
                    problem = f"Invalid params for {method}: {INVALID_UNICODE} at {invalid}"
                    await self._reply(request_id, error=RequestError.invalid_params(problem, {"at": invalid}))
                    return
                self._start_request(tg, request_id, method, params)
                # Let the handler run up to its first wait before reading on: a notification in the same read
                # (a session/cancel right behind its prompt) must find the work it refers to already started.
                await anyio.lowlevel.checkpoint()
            elif invalid is not None:
                log.warning("ignoring notification %s: %s at %s", method, INVALID_UNICODE, invalid)
            else:
                await self._on_notification(method, params)
        elif request_id is _INVALID_ID:
            log.warning("ignoring a message whose id is %s", INVALID_UNICODE)
        elif "result" in message or "error" in message:
            # The client's data (a file's text, a terminal's output) is used, not refused: scrub what cannot be kept.
            self._on_response(request_id, scrub_value(message) if suspect else message)
        else:
            await self._reply(reply_id, error=RequestError.invalid_request("neither a request nor a response"))

    def _start_request(self, tg: anyio.abc.TaskGroup, request_id: Any, method: str, params: Any) -> None:
        key = _id_key(request_id)
        if key in self._inflight:
            tg.start_soon(self._reply, request_id, None, RequestError.invalid_request("duplicate request id"))
            return
        scope = anyio.CancelScope()
        self._inflight[key] = scope
        self._idle = anyio.Event()
        tg.start_soon(self._run_request, scope, key, request_id, method, params)

    async def _run_request(self, scope: anyio.CancelScope, key: str, request_id: Any, method: str, params: Any) -> None:
        callbacks: list[AfterReply] = []
        _after_reply.set(callbacks)  # this task's own context: the handler's `after_reply` calls land here
        _request_id.set(request_id)
        try:
            with scope:
                try:
                    result = await self._dispatcher.handle_request(method, params)
                except RequestError as exc:
                    await self._reply(request_id, error=exc)
                    _drop_frames(exc)
                except Exception as exc:
                    log.exception("internal error in %s", method)
                    await self._reply(request_id, error=RequestError.internal_error(f"{type(exc).__name__}: {exc}"))
                    _drop_frames(exc)
                else:
                    await self._reply(request_id, result=result)
                    for callback in callbacks:
                        try:
                            await callback()
                        except Exception:
                            log.exception("after the reply to %s", method)
            if scope.cancelled_caught:
                await self._reply(request_id, error=RequestError.cancelled())
        finally:
            self._inflight.pop(key, None)
            if not self._inflight:
                self._idle.set()

    async def _on_notification(self, method: str, params: Any) -> None:
        if method == "$/cancel_request":
            request_id = params.get("requestId") if isinstance(params, dict) else None
            scope = self._inflight.get(_id_key(request_id))
            if scope is not None:
                scope.cancel()
            return
        try:
            await self._dispatcher.handle_notification(method, params)
        except Exception:
            # Notifications never get answers, not even errors.
            log.exception("error handling notification %s", method)

    def _on_response(self, request_id: Any, message: JsonDict) -> None:
        key = _id_key(request_id)
        pending = self._pending.get(key)
        if pending is None:
            if key in self._withdrawn:
                del self._withdrawn[key]
                log.debug("late answer to withdrawn request %r ignored", request_id)
            else:
                log.warning("response to unknown request id %.80r ignored", request_id)
            return
        if "error" in message:
            pending.error = RequestError.from_wire(message["error"])
        else:
            pending.result = message.get("result")
        pending.done.set()
