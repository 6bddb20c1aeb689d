"""A minimal ACP agent for harness tests: every prompt reports a cost of $5, then waits for session/cancel.

With `--bad`, it answers every prompt at once with `stopReason: "done"`, which ACP v1 does not have.

Plain blocking stdio, one JSON-RPC message per line; just enough of ACP v1 to be valid on the wire.
"""

from __future__ import annotations

import json
import sys
from typing import Any

SESSION = "sess_fake"


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def main() -> None:
    prompt_id = None
    for line in sys.stdin:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if method == "initialize":
            send({"id": request_id, "result": {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}})
        elif method == "session/new":
            send({"id": request_id, "result": {"sessionId": SESSION}})
        elif method == "session/prompt" and "--bad" in sys.argv:
            send({"id": request_id, "result": {"stopReason": "done"}})
        elif method == "session/prompt":
            prompt_id = request_id
            cost = {"amount": 5.0, "currency": "USD"}
            update = {"sessionUpdate": "usage_update", "used": 100, "size": 1000, "cost": cost}
            send({"method": "session/update", "params": {"sessionId": SESSION, "update": update}})
        elif method == "session/cancel" and prompt_id is not None:
            send({"id": prompt_id, "result": {"stopReason": "cancelled"}})
            prompt_id = None
        elif request_id is not None and method is not None:
            send({"id": request_id, "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    main()
