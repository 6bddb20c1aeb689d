"""Running `coder-agent run` against the scripted model server: in this process, or as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import anyio

from coder_agent.scripted.server import ScriptedModelServer

REPO_ROOT = Path(__file__).resolve().parents[2]

CLI = [sys.executable, "-m", "coder_agent", "run"]

# Each run imports litellm (~2-6 s on a busy 2-core machine) before its first model call.
RUN_TIMEOUT = 60.0

EnvFactory = Callable[..., dict[str, str]]  # the `cli_env` fixture


@dataclass(frozen=True)
class Ran:
    code: int
    stdout: str
    stderr: str

    def lines(self) -> list[dict[str, Any]]:
        """stdout as JSON lines (`--json`); fails the test on a line that is not one JSON object."""
        objects = [json.loads(line) for line in self.stdout.splitlines()]
        assert all(isinstance(obj, dict) for obj in objects), self.stdout
        return objects

    def result(self) -> dict[str, Any]:
        last = self.lines()[-1]
        assert last["type"] == "result", last
        return last

    def updates(self, kind: str) -> list[dict[str, Any]]:
        return [
            line["update"]
            for line in self.lines()
            if line["type"] == "update" and line["update"]["sessionUpdate"] == kind
        ]

    def __str__(self) -> str:
        return f"exit {self.code}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


class RunInProcess(Protocol):
    """The `run_cli_here` fixture: `run(["--prompt", "hi"], stdin="...", CODER_AGENT_X="1")`."""

    def __call__(self, args: Sequence[str], stdin: str = "", **env: str | None) -> Ran: ...


async def run_cli(
    args: Sequence[str], env: dict[str, str], cwd: Path, stdin: bytes | None = None, timeout: float = RUN_TIMEOUT
) -> Ran:
    """`coder-agent run ARGS` in `cwd`, to the end; stdin is `stdin`, or closed."""
    with anyio.fail_after(timeout):
        done = await anyio.run_process(
            [*CLI, *args],
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            env=env,
            cwd=cwd,
            check=False,
        )
    return Ran(done.returncode, done.stdout.decode(), done.stderr.decode())


def chat(request_body: dict[str, Any]) -> list[tuple[str, Any]]:
    """(role, content) of the messages the model was sent, after the system prompt."""
    return [(message["role"], message.get("content")) for message in request_body["messages"][1:]]


def tool_answer(srv: ScriptedModelServer, request: int = 1) -> str:
    """What the model read back about the tool call of the previous request."""
    message = srv.requests[request].body["messages"][-1]
    assert message["role"] == "tool", message
    return str(message["content"])
