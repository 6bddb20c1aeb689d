"""A small language server for tests (stdlib only), run as a real process: `python lsp_server_script.py [FLAGS]`.

Each line holding `ERROR` is an error (code E1), each holding `WARN` a warning (code W1). Flags:

- `--push`: no pull diagnostics; results are published after each change (with the version, unless `--no-version`)
- `--staged`: with `--push`, first an empty result, then the real one 50 ms later (a server that checks in stages)
- `--hang`: answer nothing at all (not even `initialize`)
- `--hang-diagnostics`: answer `initialize`, then never give diagnostics
- `--linger`: keep running after stdin closes and ignore SIGTERM (only SIGKILL ends it)
- `--slow-start SECONDS`: wait that long before answering `initialize`

It writes its pid to `$LSP_TEST_PIDFILE` when set (appending a line), and the requests it got to stderr.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from typing import Any

FLAGS = set(sys.argv[1:])
lock = threading.Lock()


def send(message: dict[str, Any]) -> None:
    body = json.dumps(message).encode()
    with lock:
        sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        sys.stdout.buffer.flush()


def read() -> dict[str, Any] | None:
    length = None
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode().partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    assert length is not None
    message: dict[str, Any] = json.loads(sys.stdin.buffer.read(length))
    return message


def diagnostics(text: str) -> list[dict[str, Any]]:
    found = []
    for number, line in enumerate(text.split("\n")):
        for word, severity, code in (("ERROR", 1, "E1"), ("WARN", 2, "W1")):
            at = line.find(word)
            if at >= 0:
                where = {"start": {"line": number, "character": at}, "end": {"line": number, "character": at + 4}}
                found.append({"range": where, "severity": severity, "code": code, "message": f"{word.lower()} here"})
    return found


def publish(uri: str, version: int, text: str) -> None:
    def result(items: list[dict[str, Any]]) -> None:
        params: dict[str, Any] = {"uri": uri, "diagnostics": items}
        if "--no-version" not in FLAGS:
            params["version"] = version
        send({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": params})

    if "--staged" in FLAGS:
        result([])
        time.sleep(0.05)
    result(diagnostics(text))


def main() -> None:
    if pidfile := os.environ.get("LSP_TEST_PIDFILE"):
        with open(pidfile, "a") as handle:
            handle.write(f"{os.getpid()}\n")
    if "--linger" in FLAGS:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    slow = sys.argv[sys.argv.index("--slow-start") + 1] if "--slow-start" in sys.argv else None
    documents: dict[str, str] = {}
    while (message := read()) is not None:
        method = message.get("method")
        print(f"got {method}", file=sys.stderr, flush=True)
        if "--hang" in FLAGS:
            continue
        params = message.get("params") or {}
        if method == "initialize":
            if slow:
                time.sleep(float(slow))
            capabilities: dict[str, Any] = {"textDocumentSync": 1}
            if "--push" not in FLAGS:
                capabilities["diagnosticProvider"] = {"interFileDependencies": False, "workspaceDiagnostics": False}
            send({"jsonrpc": "2.0", "id": message["id"], "result": {"capabilities": capabilities}})
        elif method in ("textDocument/didOpen", "textDocument/didChange"):
            document = params["textDocument"]
            text = document["text"] if method.endswith("didOpen") else params["contentChanges"][-1]["text"]
            documents[document["uri"]] = text
            if "--push" in FLAGS:
                publish(document["uri"], document["version"], text)
        elif method == "textDocument/diagnostic":
            if "--hang-diagnostics" in FLAGS:
                continue
            items = diagnostics(documents.get(params["textDocument"]["uri"], ""))
            send({"jsonrpc": "2.0", "id": message["id"], "result": {"kind": "full", "items": items}})
        elif method == "shutdown":
            send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        elif method == "exit":
            sys.exit(0)
        elif "id" in message:
            send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no"}})
    if "--linger" in FLAGS:
        while True:
            time.sleep(60)


if __name__ == "__main__":
    main()
