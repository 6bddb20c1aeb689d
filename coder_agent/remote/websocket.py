"""ACP over WebSocket on `/acp`: one connection per socket, one JSON-RPC message per text frame, both ways.

Binary frames are ignored (the RFD's rule). The socket's end is the connection's end, and the connection's end
(the server stops, or the client stopped reading) closes the socket.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable

import anyio
from starlette.responses import JSONResponse
from starlette.websockets import WebSocket, WebSocketDisconnect

from .budget import Held
from .connection import ConnectionGone, RemoteConnection
from .hub import Hub, Unavailable
from .outbox import Lane
from .protocols import CLOSE_TRY_LATER, INBOUND_EXTENSION, peer_of
from .security import Gate

log = logging.getLogger(__name__)

CLOSE_GOING_AWAY = 1001
CLOSE_POLICY = 1008


async def websocket_endpoint(hub: Hub, gate: Gate, websocket: WebSocket) -> None:
    denied = gate.check(websocket.headers)
    if denied is not None:
        # An HTTP answer (401, 403), not a bare close: the client can tell why. uvicorn's websockets-sansio logs
        # "ASGI callable returned without completing handshake" after it (uvicorn PR #3138); the answer is right.
        await websocket.send_denial_response(JSONResponse({"error": denied.message}, denied.status))
        return
    hub.admission.authenticated(peer_of(websocket.scope))
    try:
        connection = hub.open("websocket")
    except Unavailable as exc:
        await websocket.send_denial_response(JSONResponse({"error": str(exc)}, 503))
        return
    lane = connection.outbox.lane()
    await websocket.accept(headers=[(b"acp-connection-id", connection.id.encode())])
    async with anyio.create_task_group() as group:

        async def outgoing() -> None:
            await _send_all(websocket, connection, lane)
            group.cancel_scope.cancel()

        group.start_soon(outgoing)
        held = websocket.scope.get("extensions", {}).get(INBOUND_EXTENSION)
        await _receive_all(websocket, connection, held if isinstance(held, Held) else None)
        connection.close("the client closed the WebSocket")
        group.cancel_scope.cancel()


async def _receive_all(websocket: WebSocket, connection: RemoteConnection, held: Held | None) -> None:
    """Each text message to the agent. `held`: what the protocol counted of this client's messages in the inbound
    budget (each message's bytes, as the frames said); each is let go once the agent has taken it."""
    warned = False
    while True:
        try:
            message = await websocket.receive()
        except (WebSocketDisconnect, RuntimeError):
            return
        if message["type"] == "websocket.disconnect":
            return
        text = message.get("text")
        if text is None:
            if held is not None:
                held.release(len(message.get("bytes") or b""))
            if not warned:  # the RFD's rule, but a client sending binary frames would otherwise wait forever
                log.warning("connection %s: binary frames are ignored; ACP messages are text frames", connection.id)
                warned = True
            continue
        data = text.encode()
        del text, message  # nothing of a message is kept longer than needed: it may be megabytes
        try:
            await connection.deliver(data, _releaser(held, len(data)))
        except ConnectionGone:
            return
        del data


def _releaser(held: Held | None, size: int) -> Callable[[], None]:
    def release() -> None:
        if held is not None:
            held.release(size)

    return release


async def _send_all(websocket: WebSocket, connection: RemoteConnection, lane: Lane) -> None:
    reader = lane.attach()
    async with anyio.create_task_group() as group:

        async def stop_on_abort() -> None:
            await connection.outbox.aborted.wait()
            group.cancel_scope.cancel()

        group.start_soon(stop_on_abort)
        try:
            while True:
                try:
                    taken = await lane.next(reader, math.inf)
                except anyio.EndOfStream:
                    break
                if taken is not None:
                    await websocket.send_text(taken[1].decode())
        except (OSError, WebSocketDisconnect):  # the client is gone
            return
        finally:
            group.cancel_scope.cancel()
    code = CLOSE_TRY_LATER if connection.outbox.aborted.is_set() else CLOSE_GOING_AWAY
    reason = "the client did not read its messages" if connection.outbox.aborted.is_set() else "connection ended"
    with anyio.move_on_after(1):  # a client that reads nothing never takes the close frame either
        try:
            await websocket.close(code, reason)
        except (OSError, RuntimeError, WebSocketDisconnect):
            pass
