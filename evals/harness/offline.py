"""Offline runs: the scripted model server playing a task's golden.json or null.json.

It runs in the harness's own process (`coder_agent.scripted.server.ScriptedModelServer`, on a free port of
127.0.0.1): a trial starts no process for it. The agent is pointed at it as `openai/scripted`, so the whole
chain (ACP, agent, litellm, tools, verifier) runs with no key and no network. When the trial ends, the
requests the model was sent are listed (with the last message of each) in the trial's `model.log`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
from pydantic import ValidationError

from coder_agent.scripted.records import RecordedRequest
from coder_agent.scripted.script import Script
from coder_agent.scripted.server import ScriptedModelServer

from .errors import one_line

MODEL = "openai/scripted"
API_KEY = "sk-offline"


class ScriptedServerError(RuntimeError):
    pass


@asynccontextmanager
async def scripted_model(script: Path, log_path: Path, host: str = "127.0.0.1") -> AsyncIterator[str]:
    """Serve `script` on `host` (docker's bridge address for an agent in a container) until the block ends;
    yields its api_base URL."""
    try:
        loaded = await anyio.to_thread.run_sync(Script.load, script)
    except OSError as exc:
        raise ScriptedServerError(f"cannot read the script {script}: {exc.strerror or exc}") from exc
    except ValidationError as exc:
        raise ScriptedServerError(
            f"{script} is not a script the scripted model server can play: {one_line(exc)}"
        ) from exc
    server = ScriptedModelServer(loaded, host=host)
    await anyio.to_thread.run_sync(server.start)
    try:
        yield server.url
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(server.stop)
            await anyio.Path(log_path).write_text("".join(_logged(r) for r in server.requests), encoding="utf-8")


def _logged(request: RecordedRequest) -> str:
    """One line per request: where it went, and the last message the model was sent."""
    messages = request.body.get("messages") or [None]
    row = {"method": request.method, "path": request.path, "messages": len(messages), "last": messages[-1]}
    return json.dumps(row, ensure_ascii=False) + "\n"
