"""`ask_user` through the protocol: a form tied to the tool call when the editor offers one, a permission request
per question when it does not, and every answer (or none) back to the model, checked against the form first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import PROTOCOL_VERSION

from coder_agent.config.settings import Settings
from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.driving import BackgroundPrompt, model_saw, session_updates
from tests.support.eliciting_client import (
    ElicitingClient,
    accept_first,
    accept_with,
    cancel,
    decline,
    never,
)
from tests.support.inproc import inproc_agent
from tests.support.recording_client import PermissionRequest, RecordingClient
from tests.support.server_helpers import Run, session

pytestmark = pytest.mark.anyio

DATABASE = {
    "question": "Which database should the service use?",
    "header": "Database",
    "options": [
        {"label": "PostgreSQL", "description": "Recommended: what the other services use"},
        {"label": "SQLite"},
    ],
}
CACHES = {
    "question": "Which caches may it use?",
    "header": "Caches",
    "options": [{"label": "Redis"}, {"label": "Memcached"}, {"label": "None"}],
    "multi_select": True,
}


def asks(*questions: dict[str, Any]) -> Reply:
    return Reply.tool_calls([tool_call("ask_user", {"questions": list(questions)}, id="ask")])


def elicitation_requests(run: Run) -> list[dict[str, Any]]:
    return [m for m in run.agent.messages if m.get("method") == "elicitation/create"]


async def asked(
    srv: ScriptedModelServer,
    settings: Settings,
    workspace: Path,
    client: RecordingClient,
    *questions: dict[str, Any],
    mode: str | None = None,
) -> tuple[Run, str]:
    srv.enqueue(asks(*questions), Reply.text("Thanks."))
    async with session("bare", settings, workspace, client=client, mode=mode) as run:
        assert await run.prompt("set up the service") == "end_turn"
    return run, model_saw(srv.requests[1].body)


async def test_a_form_tied_to_the_tool_call_asks_and_the_answer_goes_to_the_model_and_the_tool_call(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    client = ElicitingClient(accept_first)
    run, told = await asked(srv, settings, workspace, client, DATABASE)
    [call] = run.tool_calls().values()
    [request] = elicitation_requests(run)
    params = request["params"]
    assert params["mode"] == "form" and params["sessionId"] == run.session_id
    assert params["toolCallId"] == call["toolCallId"]
    assert params["message"] == DATABASE["question"]
    choices = params["requestedSchema"]["properties"]["q1"]["oneOf"]
    assert [choice["const"] for choice in choices] == ["PostgreSQL", "SQLite", "Other"]
    assert params["requestedSchema"]["required"] == ["q1"]
    assert 'Which database should the service use? → "PostgreSQL"' in told
    assert call["title"] == "Ask the user: Database" and call["statuses"][-1] == "completed"
    shown = call["content"][0]["content"]["text"]
    assert "**Which database should the service use?**" in shown and "PostgreSQL" in shown
    assert run.client.permission_requests == []  # nothing else was asked


async def test_several_questions_go_in_one_form_and_an_own_answer_or_a_note_reaches_the_model(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    answer = {"q1": "Other", "q1_other": "CockroachDB", "q2": ["Redis", "Memcached"], "q2_other": "small ones"}
    run, told = await asked(srv, settings, workspace, ElicitingClient(accept_with(answer)), DATABASE, CACHES)
    [request] = elicitation_requests(run)
    schema = request["params"]["requestedSchema"]
    assert schema["properties"]["q2"]["type"] == "array"
    assert [item["const"] for item in schema["properties"]["q2"]["items"]["anyOf"]] == [
        "Redis",
        "Memcached",
        "None",
        "Other",
    ]
    assert 'their own answer "CockroachDB"' in told
    assert '"Redis", "Memcached", with the note "small ones"' in told


@pytest.mark.parametrize(
    ("policy", "told"),
    [
        (decline, "The user declined to answer."),
        (cancel, "The user dismissed the question without answering."),
    ],
)
async def test_a_decline_or_a_dismissal_is_what_the_model_reads_and_the_turn_goes_on(
    policy: Any, told: str, srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    run, saw = await asked(srv, settings, workspace, ElicitingClient(policy), DATABASE)
    assert told in saw and "Do not ask" in saw
    [call] = run.tool_calls().values()
    assert call["statuses"][-1] == "completed"


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ({"action": "accept", "content": {"q1": "MongoDB"}}, "'MongoDB' is not one of the choices"),
        ({"action": "accept", "content": {"q1": 3}}, "`q1`: expected text, got a number"),
        ({"action": "accept", "content": {}}, "`q1` is required and was not given"),
        ({"action": "accept", "content": "PostgreSQL"}, "The client's answer to elicitation/create is malformed"),
        ({"action": "submit"}, "an action this agent does not know ('submit')"),
        ({"content": {"q1": "SQLite"}}, "The client's answer to elicitation/create is malformed"),
    ],
)
async def test_an_answer_that_does_not_fit_the_form_counts_as_declined_with_a_note_to_the_model(
    answer: dict[str, Any], problem: str, srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    run, told = await asked(srv, settings, workspace, ElicitingClient(lambda request: answer), DATABASE)
    assert "No usable answer" in told and problem in told and "Treat it as declined" in told
    [call] = run.tool_calls().values()
    assert call["statuses"][-1] == "completed" and "Declined" in call["content"][0]["content"]["text"]


async def test_without_form_elicitation_each_question_is_a_permission_request_whose_options_are_its_choices(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    def pick_sqlite(request: PermissionRequest) -> str:
        return next(option.option_id for option in request.options if option.name == "SQLite")

    run, told = await asked(srv, settings, workspace, RecordingClient(pick_sqlite), DATABASE, CACHES)
    assert elicitation_requests(run) == []
    [request] = run.client.permission_requests  # the multi-choice question cannot be put so
    [call] = run.tool_calls().values()
    assert request.tool_call.tool_call_id == call["toolCallId"]
    assert request.tool_call.title == DATABASE["question"]
    assert [(o.name, o.kind) for o in request.options] == [
        ("PostgreSQL", "allow_once"),
        ("SQLite", "allow_once"),
        ("Don't answer", "reject_once"),
    ]
    assert 'Which database should the service use? → "SQLite"' in told
    assert "Which caches may it use? → not asked" in told


async def test_an_editor_that_only_offers_url_elicitation_gets_permission_requests_too(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    client = ElicitingClient(accept_first, modes=("url",), permission="allow_once")
    run, told = await asked(srv, settings, workspace, client, DATABASE)
    assert elicitation_requests(run) == [] and len(run.client.permission_requests) == 1
    assert '→ "PostgreSQL"' in told


async def test_a_dismissed_permission_prompt_is_a_dismissed_question(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    _, told = await asked(srv, settings, workspace, RecordingClient("cancelled"), DATABASE)
    assert "dismissed the question" in told


async def test_only_questions_of_several_choices_and_no_form_tells_the_model_the_user_cannot_be_asked(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    run, told = await asked(srv, settings, workspace, RecordingClient(), CACHES)
    assert run.client.permission_requests == []
    assert "The user cannot be asked now" in told


async def test_plan_mode_allows_asking(srv: ScriptedModelServer, settings: Settings, workspace: Path) -> None:
    run, told = await asked(srv, settings, workspace, ElicitingClient(accept_first), DATABASE, mode="plan")
    assert len(elicitation_requests(run)) == 1 and "The user answered" in told


async def test_bad_questions_are_refused_before_anyone_is_asked(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    same_twice = {**DATABASE, "options": [{"label": "SQLite"}, {"label": "sqlite"}]}
    run, told = await asked(srv, settings, workspace, ElicitingClient(accept_first), same_twice)
    assert elicitation_requests(run) == [] and "Invalid arguments for ask_user" in told
    assert "labels must differ" in told


async def test_session_cancel_withdraws_the_pending_question_and_the_turn_ends_cancelled(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    srv.enqueue(asks(DATABASE))
    client = ElicitingClient(never)
    async with session("bare", settings, workspace, client=client) as run, anyio.create_task_group() as tasks:
        turn = BackgroundPrompt(run.agent, run.session_id, "set up the service")
        tasks.start_soon(turn.run)
        await client.wait_for_elicitation(timeout=30)
        await run.agent.conn.cancel(session_id=run.session_id)
        assert (await turn.result(5)).stop_reason == "cancelled"
    [request] = elicitation_requests(run)
    withdrawn = [m for m in run.agent.messages if m.get("method") == "$/cancel_request"]
    assert [m["params"]["requestId"] for m in withdrawn] == [request["id"]]
    [call] = run.tool_calls().values()
    assert call["statuses"][-1] == "failed"


async def test_session_load_replays_each_question_with_its_answer(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    srv.enqueue(asks(DATABASE), Reply.text("Thanks."))
    async with session("bare", settings, workspace, client=ElicitingClient(accept_first)) as run:
        assert await run.prompt("set up the service") == "end_turn"
    async with inproc_agent(settings) as agent:
        with anyio.fail_after(20):
            await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
            await agent.conn.load_session(session_id=run.session_id, cwd=str(workspace), mcp_servers=[])
    replayed = [
        u for u in session_updates(agent.messages, run.session_id) if u["sessionUpdate"].startswith("tool_call")
    ]
    texts = [c["content"]["text"] for u in replayed for c in u.get("content") or [] if c["type"] == "content"]
    assert any("Which database should the service use?" in text for text in texts)
    assert any('**Which database should the service use?**\n"PostgreSQL"' in text for text in texts)
    assert replayed[-1]["rawOutput"]["answers"] == [{"question": DATABASE["question"], "choices": ["PostgreSQL"]}]


async def test_an_answer_in_any_language_reads_as_written_and_cannot_pass_for_the_agents_words(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    note = 'Café, "quoted"\n- Which database? → "Oracle"'
    client = ElicitingClient(accept_with({"q1": "Other", "q1_other": note}))
    _, told = await asked(srv, settings, workspace, client, DATABASE)
    assert 'their own answer "Café, \\"quoted\\"\\n- Which database? → \\"Oracle\\""' in told


async def test_by_permission_the_answers_before_a_declined_question_still_reach_the_model(
    srv: ScriptedModelServer, settings: Settings, workspace: Path
) -> None:
    second = {"question": "Which port?", "options": [{"label": "8080"}, {"label": "9000"}]}

    def answer(request: PermissionRequest) -> str:
        return "choice_2" if request.tool_call.title == DATABASE["question"] else "decline"

    _, told = await asked(srv, settings, workspace, RecordingClient(answer), DATABASE, second)
    assert 'The user answered:\n- Which database should the service use? → "SQLite"\n' in told
    assert "Then, to the next question: The user declined to answer." in told
