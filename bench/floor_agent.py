"""The floor for bench/first_token.py: an ACP agent in the standard library alone, nothing to load.

It answers `initialize` and `session/new`, and on `session/prompt` streams the reply of an
OpenAI-compatible server (CODER_AGENT_API_BASE) and forwards its first content as an
`agent_message_chunk`, then ends the turn. No tools, no history, no errors handled: the least any agent
must do between a prompt and its first chunk.
"""

import http.client
import json
import os
import sys
import urllib.parse


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def prompt(session_id: str, text: str) -> None:
    base = urllib.parse.urlsplit(os.environ["CODER_AGENT_API_BASE"])
    conn = http.client.HTTPConnection(base.hostname, base.port)
    body = {"model": "floor", "stream": True, "messages": [{"role": "user", "content": text}]}
    key = os.environ.get("CODER_AGENT_API_KEY", "")
    headers = {"Content-Type": "application/json", "Authorization": "Bearer " + key}
    conn.request("POST", base.path + "/chat/completions", json.dumps(body), headers)
    response = conn.getresponse()
    for raw in response:
        line = raw.decode().strip()
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        choices = json.loads(line[6:])["choices"]
        delta = choices[0]["delta"] if choices else {}
        if delta.get("content"):
            chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": delta["content"]}}
            send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session_id, "update": chunk}})
    conn.close()


def main() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        method, params = request.get("method"), request.get("params") or {}
        if method == "initialize":
            result: dict = {"protocolVersion": 1, "agentCapabilities": {}}
        elif method == "session/new":
            result = {"sessionId": "floor"}
        elif method == "session/prompt":
            prompt(params["sessionId"], " ".join(b.get("text", "") for b in params["prompt"]))
            result = {"stopReason": "end_turn"}
        else:
            result = {}
        send({"jsonrpc": "2.0", "id": request["id"], "result": result})


if __name__ == "__main__":
    main()
