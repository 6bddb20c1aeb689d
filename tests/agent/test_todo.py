"""`todo_write`: every call sends the editor the whole plan and tells the model where it stands."""

from __future__ import annotations

from pathlib import Path

import anyio.abc
import pytest
from pydantic import ValidationError

from coder_agent.acp.schema import PlanEntry, PlanUpdate
from coder_agent.agent.tools.todo import TodoWrite
from tests.support.shell_fixtures import NoTerminalClient, call, make_ctx

pytestmark = pytest.mark.anyio


async def test_each_call_emits_the_complete_plan(tmp_path: Path, tasks: anyio.abc.TaskGroup) -> None:
    client = NoTerminalClient()
    ctx = make_ctx(client, tmp_path, tasks)
    first = [
        {"content": "Read the code", "status": "in_progress", "priority": "high"},
        {"content": "Fix", "status": "pending"},
    ]
    result = await call(TodoWrite(), ctx, entries=first)
    assert result.output == "Plan updated: 1 in progress, 1 pending."
    second = [
        {"content": "Read the code", "status": "completed", "priority": "high"},
        {"content": "Fix", "status": "in_progress"},
        {"content": "Test", "status": "pending", "priority": "low"},
    ]
    result = await call(TodoWrite(), ctx, entries=second)
    assert result.output == "Plan updated: 1 completed, 1 in progress, 1 pending."
    assert client.emitted == [
        PlanUpdate(
            entries=[
                PlanEntry(content="Read the code", status="in_progress", priority="high"),
                PlanEntry(content="Fix", status="pending", priority="medium"),
            ]
        ),
        PlanUpdate(
            entries=[
                PlanEntry(content="Read the code", status="completed", priority="high"),
                PlanEntry(content="Fix", status="in_progress", priority="medium"),
                PlanEntry(content="Test", status="pending", priority="low"),
            ]
        ),
    ]
    assert client.emitted[1].wire()["sessionUpdate"] == "plan"


async def test_an_empty_list_clears_the_plan(tmp_path: Path, tasks: anyio.abc.TaskGroup) -> None:
    client = NoTerminalClient()
    result = await call(TodoWrite(), make_ctx(client, tmp_path, tasks), entries=[])
    assert result.output == "Plan cleared."
    assert client.emitted == [PlanUpdate(entries=[])]


async def test_more_than_one_entry_in_progress_gets_a_reminder(tmp_path: Path, tasks: anyio.abc.TaskGroup) -> None:
    entries = [{"content": "A", "status": "in_progress"}, {"content": "B", "status": "in_progress"}]
    result = await call(TodoWrite(), make_ctx(NoTerminalClient(), tmp_path, tasks), entries=entries)
    assert result.output == "Plan updated: 2 in progress. Keep one entry in progress at a time."


async def test_the_intent_never_needs_permission(tmp_path: Path, tasks: anyio.abc.TaskGroup) -> None:
    tool = TodoWrite()
    intent = await tool.prepare(tool.parse({"entries": []}), make_ctx(NoTerminalClient(), tmp_path, tasks))
    assert (intent.title, intent.kind, intent.effect) == ("Update plan", "think", "none")
    assert tool.read_only


@pytest.mark.parametrize(
    "entry",
    [
        {"content": "A", "status": "done"},
        {"content": "A", "status": "pending", "priority": "urgent"},
        {"status": "pending"},
    ],
)
def test_unknown_statuses_and_priorities_are_refused(entry: dict[str, str]) -> None:
    with pytest.raises(ValidationError):
        TodoWrite().parse({"entries": [entry]})


def test_the_schema_offers_the_literal_choices() -> None:
    spec = TodoWrite().spec()["function"]
    assert spec["name"] == "todo_write" and spec["description"]
    entry = spec["parameters"]["$defs"]["TodoEntry"]
    assert entry["properties"]["status"]["enum"] == ["pending", "in_progress", "completed"]
    assert entry["properties"]["priority"]["enum"] == ["high", "medium", "low"]
    assert entry["properties"]["priority"]["default"] == "medium"
