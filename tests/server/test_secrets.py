"""The agent in this process, through the protocol: no secret it knows reaches the client's lines, the session
store, or the model (tool results); an edit that would put a mask in place of a key is refused.

The key is the model's (`CODER_AGENT_API_KEY`), fresh for each test, in no form litellm's own redaction knows.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import anyio
import pytest

from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.driving import model_saw, open_session, prompt
from tests.support.inproc import inproc_agent
from tests.support.server_helpers import PROFILES, Profile, session

pytestmark = pytest.mark.anyio

MASKED = "[secret CODER_AGENT_API_KEY]"


@pytest.fixture
def key() -> str:
    return "live-" + secrets.token_hex(20)


def stored(home: Path) -> bytes:
    """The session store's bytes: the database, its WAL and shared memory."""
    return b"".join(path.read_bytes() for path in sorted(home.glob("sessions.db*")))


async def test_a_reply_that_holds_the_key_reaches_the_client_and_the_store_masked(
    srv: ScriptedModelServer, make_settings: Any, key: str, workspace: Path, tmp_path: Path
) -> None:
    srv.enqueue(Reply.text("The key you sent is ", key, "."))
    settings = make_settings(api_key=key)
    async with inproc_agent(settings, stdio=True) as agent:  # through the real stdio transport
        with anyio.fail_after(30):
            session_id = await open_session(agent, workspace)
            assert await prompt(agent, session_id, "what key?") == "end_turn"
    assert srv.requests[0].headers["authorization"] == f"Bearer {key}"
    assert agent.client.agent_text(session_id) == f"The key you sent is {MASKED}."
    assert key.encode() not in b"".join(agent.io.validator.agent_lines)
    assert key.encode() not in stored(tmp_path / "home")


@pytest.mark.parametrize("profile", PROFILES)
async def test_the_model_reads_what_tools_show_with_the_keys_masked(
    profile: Profile, srv: ScriptedModelServer, make_settings: Any, key: str, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "creds.env").write_text(f"OPENAI_API_KEY={key}\n")
    srv.enqueue(
        Reply.tool_calls([tool_call("read_file", {"path": "creds.env"})]),
        Reply.tool_calls([tool_call("run_command", {"command": "cat creds.env; env | grep CODER_AGENT_ || true"})]),
        Reply.text("Read it."),
    )
    settings = make_settings(api_key=key)
    async with session(profile, settings, workspace) as run:
        assert await run.prompt("show me the credentials") == "end_turn"
        calls = run.tool_calls()
    read, command = (model_saw(request.body) for request in srv.requests[1:])
    assert f"OPENAI_API_KEY={MASKED}" in read and f"OPENAI_API_KEY={MASKED}" in command
    assert all(key not in repr(request.body) for request in srv.requests)
    assert all(key not in repr(call) for call in calls.values())  # what the editor was shown
    assert key.encode() not in stored(tmp_path / "home")


@pytest.mark.parametrize("profile", PROFILES)
async def test_an_edit_that_would_put_a_mask_in_place_of_the_key_is_refused_and_the_file_keeps_it(
    profile: Profile, srv: ScriptedModelServer, make_settings: Any, key: str, workspace: Path, tmp_path: Path
) -> None:
    creds = workspace / "creds.env"
    creds.write_text(f"OPENAI_API_KEY={key}\nREGION=eu\n")
    rewritten = f"OPENAI_API_KEY={MASKED}\nREGION=us\n"  # the file as the model read it, with one change
    srv.enqueue(
        Reply.tool_calls([tool_call("write_file", {"path": "creds.env", "content": rewritten}, id="w")]),
        Reply.tool_calls([tool_call("edit_file", {"path": "creds.env", "old_string": "eu", "new_string": "us"})]),
        Reply.text("Done."),
    )
    settings = make_settings(api_key=key)
    async with session(profile, settings, workspace) as run:
        assert await run.prompt("move to the us region") == "end_turn"
        write, edit = run.tool_calls().values()
    assert creds.read_text() == f"OPENAI_API_KEY={key}\nREGION=us\n"  # the editor got the real text to write
    assert write["statuses"][-1] == "failed" and edit["statuses"][-1] == "completed"
    told = model_saw(srv.requests[1].body)
    assert f"holds keys that you read masked as {MASKED}" in told and "Not written" in told
