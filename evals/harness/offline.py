"""Offline runs: the scripted model server as a subprocess, playing a task's golden.json or null.json.

`python -m coder_agent.scripted --script FILE` prints its api_base on its first stdout line, then serves
until SIGTERM. The agent is pointed at it as `openai/scripted`, so the whole chain (ACP, agent, litellm,
tools, verifier) runs with no key and no network.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

import anyio

from coder_agent.acp.lines import read_lines

from .procs import kill_group

START_TIMEOUT = 30.0
STOP_TIMEOUT = 5.0
MODEL = "openai/scripted"
API_KEY = "sk-offline"


class ScriptedServerError(RuntimeError):
    pass


@asynccontextmanager
async def scripted_model(script: Path, env: Mapping[str, str], log_path: Path) -> AsyncIterator[str]:
    """Run the scripted model server on `script`; yields its api_base URL."""
    with log_path.open("wb") as log:
        process = await anyio.open_process(
            [sys.executable, "-m", "coder_agent.scripted", "--script", str(script)],
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
        )
    try:
        assert process.stdout is not None
        url = None
        with anyio.move_on_after(START_TIMEOUT):
            async for line in read_lines(process.stdout, 4096):
                if isinstance(line, bytes) and line.startswith(b"http"):
                    url = line.decode().strip()
                    break
        if url is None:
            detail = (await anyio.Path(log_path).read_text(encoding="utf-8", errors="replace"))[-2000:]
            raise ScriptedServerError(f"the scripted model server did not start on {script}:\n{detail}")
        yield url
    finally:
        with anyio.CancelScope(shield=True):
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
            with anyio.move_on_after(STOP_TIMEOUT):
                await process.wait()
            kill_group(process)
            await process.aclose()
