"""A real `coder-agent serve` process, as a user starts it, for the tests that need one (e2e)."""

from __future__ import annotations

import re
import shlex
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import anyio.abc

from coder_agent.scripted.server import ScriptedModelServer
from tests.support.acp_client import base_env

REPO = Path(__file__).resolve().parents[2]


def agent_env(tmp_path: Path, srv: ScriptedModelServer, **extra: str) -> dict[str, str]:
    return {
        **base_env(),
        "PYTHONPATH": str(REPO),
        "CODER_AGENT_HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "CODER_AGENT_MODEL": "openai/scripted",
        "CODER_AGENT_API_BASE": srv.url,
        "CODER_AGENT_API_KEY": "sk-test",
        **extra,
    }


class Served:
    def __init__(self, process: anyio.abc.Process) -> None:
        self.process = process
        self.stderr = b""
        self.ready = anyio.Event()

    @property
    def text(self) -> str:
        return self.stderr.decode(errors="replace")

    async def drain(self) -> None:
        assert self.process.stderr is not None
        async for chunk in self.process.stderr:
            self.stderr += chunk
            if b"/health" in self.stderr and (b"token" in self.stderr):
                self.ready.set()
        self.ready.set()

    @property
    def port(self) -> int:
        match = re.search(r"serving ACP on http://[^ ]+:(\d+)/acp", self.text)
        assert match, self.text
        return int(match.group(1))


@asynccontextmanager
async def serve(
    env: dict[str, str], *args: str, open_files: int | None = None, soft_open_files: int | None = None
) -> AsyncIterator[Served]:
    """`coder-agent serve --port 0 ARGS`; `open_files`: its limit of open files, soft and hard (as `ulimit -n`);
    `soft_open_files`: the soft limit alone (`ulimit -S -n`)."""
    command = [sys.executable, "-m", "coder_agent", "serve", "--port", "0", *args]
    if open_files is not None:
        command = ["sh", "-c", f"ulimit -n {open_files} && exec {shlex.join(command)}"]
    elif soft_open_files is not None:
        command = ["sh", "-c", f"ulimit -S -n {soft_open_files} && exec {shlex.join(command)}"]
    async with await anyio.open_process(command, env=env, cwd=REPO, stderr=subprocess.PIPE) as process:
        served = Served(process)
        async with anyio.create_task_group() as group:
            group.start_soon(served.drain)
            with anyio.fail_after(30):
                await served.ready.wait()
            try:
                yield served
            finally:
                process.send_signal(signal.SIGINT)
                with anyio.fail_after(30):
                    await process.wait()
