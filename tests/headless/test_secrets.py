"""`coder-agent run` shows no secret it knows: not in the live view, not in its JSON lines, not in its errors.

Its output does not go through the protocol's writer: what it prints is masked on the way out (`masking`).
"""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.run_helpers import RunInProcess

MASKED = "[secret CODER_AGENT_API_KEY]"


@pytest.mark.parametrize("view", ["text", "json"])
def test_a_reply_and_an_error_that_hold_the_key_are_shown_masked(
    view: str, srv: ScriptedModelServer, run_cli_here: RunInProcess, workspace: Path
) -> None:
    key = "live-" + secrets.token_hex(20)
    json_flag = ["--json"] if view == "json" else []
    srv.enqueue(Reply.text("You sent ", key, " as your key."))
    shown = run_cli_here([*json_flag, "--prompt", "what key?"], CODER_AGENT_API_KEY=key)
    srv.enqueue(Reply.error(401, "Incorrect API key provided: {key}", echo_key=True))
    failed = run_cli_here([*json_flag, "--prompt", "again"], CODER_AGENT_API_KEY=key)
    assert (shown.code, failed.code) == (0, 1), (shown, failed)
    assert srv.requests[0].headers["authorization"] == f"Bearer {key}"
    for ran in (shown, failed):
        assert key not in ran.stdout + ran.stderr
    assert MASKED in shown.stdout and f"Incorrect API key provided: {MASKED}" in failed.stdout + failed.stderr
