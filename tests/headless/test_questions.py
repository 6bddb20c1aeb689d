"""The agent's questions in `coder-agent run`: asked on the terminal field by field, and without a terminal (or with
`--yes`) not asked at all, the model told so. (The whole run on a real terminal: test_run_process.py.)"""

from __future__ import annotations

import io
import os
from pathlib import Path

import anyio
import pytest
from rich.console import Console

from coder_agent.acp.schema import CreateElicitationRequest, ElicitationSchema
from coder_agent.headless.output import JsonOutput
from coder_agent.headless.permissions import LineReader
from coder_agent.headless.questions import TerminalQuestions
from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.run_helpers import RunInProcess, tool_answer

QUESTION = {
    "question": "Which database should the service use?",
    "header": "Database",
    "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}],
}
FORM = ElicitationSchema.model_validate(
    {
        "properties": {
            "db": {"type": "string", "title": "Database?", "oneOf": [{"const": "pg", "title": "PostgreSQL"}]},
            "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}},
            "port": {"type": "integer"},
            "ok": {"type": "boolean"},
            "note": {"type": "string"},
        },
        "required": ["db", "port"],
    }
)


@pytest.mark.parametrize("args", [["--prompt", "set it up"], ["--yes", "--prompt", "set it up"]])
def test_without_a_terminal_or_with_yes_nobody_is_asked_and_the_run_goes_on(
    args: list[str], srv: ScriptedModelServer, run_cli_here: RunInProcess
) -> None:
    srv.enqueue(Reply.tool_calls([tool_call("ask_user", {"questions": [QUESTION]})]), Reply.text("Chose myself."))
    ran = run_cli_here(args)
    assert ran.code == 0, ran
    assert tool_answer(srv).startswith("The user cannot be asked now: nobody can answer here")
    assert "Not asked" in ran.stdout


async def answered(typed: bytes, request: CreateElicitationRequest) -> tuple[str, str, dict[str, object] | None]:
    read_end, write_end = os.pipe()
    os.write(write_end, typed)
    os.close(write_end)
    shown = io.StringIO()
    questions = TerminalQuestions(JsonOutput(io.BytesIO()), Console(file=shown), LineReader(read_end), anyio.Lock())
    try:
        with anyio.fail_after(5):
            response = await questions.ask(request)
            await questions.completed("e-1")
    finally:
        os.close(read_end)
    return response.action, shown.getvalue(), response.content


@pytest.mark.anyio
async def test_a_form_is_asked_field_by_field_until_each_answer_can_be_read() -> None:
    request = CreateElicitationRequest(mode="form", message="Set up?", requested_schema=FORM, session_id="s")
    action, shown, content = await answered(b"2\n1\n3 1 3\nmany\n8080\n\n\n", request)
    assert action == "accept"
    assert content == {"db": "pg", "tags": ["c", "a"], "port": 8080}
    assert "1) PostgreSQL" in shown and "Type a number from 1 to 1." in shown and "Type a whole number." in shown


@pytest.mark.anyio
@pytest.mark.parametrize(("typed", "action"), [(b"1\n!\n", "decline"), (b"1\n", "cancel"), (b"", "cancel")])
async def test_a_bang_declines_the_form_and_the_end_of_input_dismisses_it(typed: bytes, action: str) -> None:
    request = CreateElicitationRequest(mode="form", message="Set up?", requested_schema=FORM, session_id="s")
    assert (await answered(typed, request))[0] == action


@pytest.mark.anyio
@pytest.mark.parametrize(("typed", "action"), [(b"y\n", "accept"), (b"n\n", "decline"), (b"\n", "decline")])
async def test_a_url_is_shown_with_its_host_and_opened_only_if_the_user_says_so(typed: bytes, action: str) -> None:
    request = CreateElicitationRequest(
        mode="url", message="Sign in to Example", url="https://auth.example.com/x?s=1", elicitation_id="e-1"
    )
    got, shown, _ = await answered(typed, request)
    assert got == action
    assert "https://auth.example.com/x?s=1" in shown and "auth.example.com" in shown
    assert ("The step at auth.example.com is done." in shown) == (action == "accept")


def test_the_answer_lands_in_the_stored_session(
    srv: ScriptedModelServer, run_cli_here: RunInProcess, workspace: Path
) -> None:
    srv.enqueue(Reply.tool_calls([tool_call("ask_user", {"questions": [QUESTION]})]), Reply.text("ok"))
    ran = run_cli_here(["--json", "--prompt", "set it up"])
    assert ran.code == 0, ran
    [final] = [u for u in ran.updates("tool_call_update") if u.get("status") == "completed"]
    assert final["rawOutput"]["action"] == "unasked"
