"""`python -m coder_agent sessions ...` as a process, for a new user: where it looks, and that it creates nothing.

(What it prints for sessions an agent recorded: tests/test_sessions_cli.py, in process.)
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from tests.support.acp_client import agent_command, base_env
from tests.support.agent_env import REPO_ROOT

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


async def test_on_a_fresh_install_the_sessions_cli_finds_no_sessions_and_creates_nothing(
    workspace: Path, tmp_path: Path
) -> None:
    user = tmp_path / "user"  # a new user: no CODER_AGENT_HOME, no XDG_DATA_HOME, nothing under ~/.local
    user.mkdir()
    env = {**base_env(), "PYTHONPATH": str(REPO_ROOT), "HOME": str(user)}
    store = user / ".local" / "share" / "coder-agent" / "sessions.db"

    async def sessions(*args: str) -> tuple[int, str, str]:
        with anyio.fail_after(30):
            done = await anyio.run_process(agent_command(["sessions", *args]), env=env, cwd=workspace, check=False)
        return done.returncode, done.stdout.decode(), done.stderr.decode()

    assert await sessions("list") == (0, f"No saved sessions yet (the agent creates {store} for the first one).\n", "")
    for command in (["show", "sess_x"], ["export", "sess_x"], ["delete", "sess_x"]):
        code, out, err = await sessions(*command)
        assert (code, out) == (1, ""), err
        assert err == f"coder-agent: unknown session sess_x: no sessions saved yet ({store} does not exist)\n"
    assert list(user.iterdir()) == []
