"""A remote client to be killed mid-turn: `python -m tests.remote.killed_client WS_URL TOKEN CWD`.

It connects with the official SDK's WebSocket transport, opens a session, prints its id, sends a prompt, prints
`streaming` at the first chunk of the reply, and then waits for the test to kill it (SIGKILL: no close frame).
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from acp import PROTOCOL_VERSION, connect_to_agent, text_block
from acp.schema import AgentMessageChunk
from acp.ws import create_websocket_stream


class _Client:
    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if isinstance(update, AgentMessageChunk):
            print("streaming", flush=True)

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def on_connect(self, conn: Any) -> None:
        pass


async def main(url: str, token: str, cwd: str) -> None:
    transport = await create_websocket_stream(url, headers={"Authorization": f"Bearer {token}"})
    conn = connect_to_agent(_Client(), transport)
    await conn.initialize(protocol_version=PROTOCOL_VERSION)
    session = await conn.new_session(cwd=cwd, mcp_servers=[])
    print(session.session_id, flush=True)
    await conn.prompt(session_id=session.session_id, prompt=[text_block("tell me a long story")])
    print("the turn ended: the test should have killed this client", flush=True)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
