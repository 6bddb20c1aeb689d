"""`coder-agent serve`: the agent for many remote connections, over WebSocket and Streamable HTTP (ACP's `/acp`).

Imported only by `coder-agent serve`; needs the `serve` extra (Starlette, uvicorn, websockets).
"""
