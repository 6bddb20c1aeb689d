"""The ASGI application: `/acp` (WebSocket upgrade and Streamable HTTP) and `/health`."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket

from .http_stream import HttpEndpoint
from .hub import Hub
from .security import Gate
from .websocket import websocket_endpoint

ACP_PATH = "/acp"
HEALTH_PATH = "/health"


def build_app(hub: Hub, gate: Gate) -> Starlette:
    http = HttpEndpoint(hub, gate)

    async def health(request: Request) -> JSONResponse:
        # Open to all (load balancers ask without a token), so it says nothing but that the server is up.
        return JSONResponse({"status": "ok"})

    async def acp_websocket(websocket: WebSocket) -> None:
        await websocket_endpoint(hub, gate, websocket)

    return Starlette(
        routes=[
            Route(HEALTH_PATH, health, methods=["GET"]),
            Route(ACP_PATH, http.__call__, methods=["GET", "POST", "DELETE", "OPTIONS"]),
            WebSocketRoute(ACP_PATH, acp_websocket),
        ]
    )
