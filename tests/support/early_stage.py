"""Driving the real agent process through its early stage (`coder_agent.prestart`): the runtime's import held
until the test releases it, so that what is answered meanwhile was answered by the early reader; the first prompt
sent at once; stdin closed and the exit timed."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio

from tests.support.acp_client import RawAgent
from tests.support.agent_env import FIRST_PROMPT_TIMEOUT, REPO_ROOT, EnvFactory, initialize, request

HOLD = """
import os, sys, time

class _Hold:
    def find_spec(self, name, path=None, target=None):
        if name == "coder_agent.server.assembly":
            sys.meta_path.remove(self)
            deadline = time.monotonic() + 60
            while not os.path.exists(os.environ["HOLD_UNTIL"]) and time.monotonic() < deadline:
                time.sleep(0.01)
        return None

if os.environ.get("HOLD_UNTIL"):
    sys.meta_path.insert(0, _Hold())
"""


def held_env(agent_env: EnvFactory, tmp_path: Path, **overrides: str) -> tuple[dict[str, str], Path]:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(textwrap.dedent(HOLD), encoding="utf-8")
    release = tmp_path / "release"
    return agent_env(PYTHONPATH=f"{site}{os.pathsep}{REPO_ROOT}", HOLD_UNTIL=str(release), **overrides), release


async def reply_to(raw: RawAgent, request_id: int, seen: list[dict[str, Any]]) -> dict[str, Any]:
    """The reply to `request_id`; the notifications before it are added to `seen`."""
    while True:
        message = await raw.read_message(FIRST_PROMPT_TIMEOUT)
        if message.get("id") == request_id:
            return message
        seen.append(message)


def update_of(message: dict[str, Any]) -> dict[str, Any]:
    return message.get("params", {}).get("update", {}) if message.get("method") == "session/update" else {}


def chunks(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [update_of(m) for m in messages if update_of(m).get("sessionUpdate") == "agent_message_chunk"]


async def start(raw: RawAgent, cwd: Path, text: str) -> str:
    """initialize, session/new (answered early), then the prompt at once; the session's id."""
    seen: list[dict[str, Any]] = []
    await raw.send_json(initialize(0))
    await reply_to(raw, 0, seen)
    await raw.send_json(request(1, "session/new", {"cwd": str(cwd), "mcpServers": []}))
    session_id: str = (await reply_to(raw, 1, seen))["result"]["sessionId"]
    await announced_commands(raw)
    prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
    await raw.send_json(request(2, "session/prompt", prompt))
    return session_id


async def announced_commands(raw: RawAgent) -> dict[str, Any]:
    """The slash commands the early stage announces right after its `session/new` answer."""
    update = update_of(await raw.read_message(FIRST_PROMPT_TIMEOUT))
    assert update.get("sessionUpdate") == "available_commands_update", update
    return update


async def held_messages(raw: RawAgent, count: int) -> list[dict[str, Any]]:
    return [await raw.read_message(FIRST_PROMPT_TIMEOUT) for _ in range(count)]


EXIT_WITHIN = 0.5  # seconds from stdin's end to the process's, beyond what the machine's load adds (`exit_floor`)

# A process that ends as soon as its input does: how long the machine takes, now, to show that ended.
_AT_ONCE = "import sys; sys.stdout.write('ready\\n'); sys.stdout.flush(); sys.stdin.buffer.read()"


async def exit_floor() -> float:
    """How long a Python process that exits at once when its stdin ends takes to be seen gone, now: on a machine
    under load (tests run two at a time beside other work) that alone can be a good part of the half second."""
    process = await anyio.open_process([sys.executable, "-c", _AT_ONCE])
    async with process:
        assert process.stdout is not None and process.stdin is not None
        with anyio.fail_after(60):
            await process.stdout.receive()  # it runs, and reads its input
            started = anyio.current_time()
            await process.stdin.aclose()
            await process.wait()
        return anyio.current_time() - started


async def closed_stdin_exit(raw: RawAgent) -> float:
    """Close stdin; how long the process took to exit (it must exit with 0), beyond the machine's `exit_floor`
    measured just before: what the agent itself takes, which is what the half second bounds."""
    floor = await exit_floor()
    started = anyio.current_time()
    await raw.close_stdin()
    code = await raw.wait_exit(timeout=30)
    elapsed = anyio.current_time() - started
    assert code == 0
    return max(0.0, elapsed - floor)
