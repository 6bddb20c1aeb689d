"""The harness's client side on its own: files and terminals confined to the workspace, permission answers,
updates, and the cost cap (against a fake agent).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from coder_agent.acp.errors import METHOD_NOT_FOUND, RESOURCE_NOT_FOUND, RequestError
from evals.harness.agent_process import launch_agent
from evals.harness.client import EvalClient, PermissionPolicy, Profile
from evals.harness.fs import FileService
from evals.harness.results import Attempt
from evals.harness.session import CostGuard, open_session, prompt_turn
from evals.harness.task import Task
from evals.harness.terminals import TerminalService
from evals.harness.wire import WireLog, methods

pytestmark = pytest.mark.anyio

SESSION = "sess_1"
OPTIONS = [
    {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
    {"optionId": "always", "name": "Always", "kind": "allow_always"},
    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    root.mkdir()
    (root / "notes.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    (tmp_path / "secret.txt").write_text("outside")
    return root.resolve()


async def test_files_inside_the_workspace_are_read_and_written_as_they_are(workspace: Path) -> None:
    files = FileService(workspace)
    read = await files.read_text_file({"sessionId": SESSION, "path": str(workspace / "notes.txt")})
    assert read == {"content": "one\r\ntwo\r\nthree\r\n"}
    page = await files.read_text_file(
        {"sessionId": SESSION, "path": str(workspace / "notes.txt"), "line": 2, "limit": 1}
    )
    assert page == {"content": "two\r\n"}
    target = workspace / "new" / "deep" / "file.txt"
    assert await files.write_text_file({"sessionId": SESSION, "path": str(target), "content": "a\r\nb"}) == {}
    assert target.read_bytes() == b"a\r\nb"


async def test_paths_outside_the_workspace_or_missing_files_are_resource_not_found(workspace: Path) -> None:
    files = FileService(workspace)
    (workspace / "escape").symlink_to(workspace.parent)
    outside = [
        str(workspace.parent / "secret.txt"),
        str(workspace / ".." / "secret.txt"),
        str(workspace / "escape" / "secret.txt"),
    ]
    for path in outside:
        with pytest.raises(RequestError) as caught:
            await files.read_text_file({"sessionId": SESSION, "path": path})
        assert caught.value.code == RESOURCE_NOT_FOUND
    with pytest.raises(RequestError) as write:
        await files.write_text_file({"sessionId": SESSION, "path": outside[0], "content": "x"})
    assert write.value.code == RESOURCE_NOT_FOUND
    assert (workspace.parent / "secret.txt").read_text() == "outside"
    with pytest.raises(RequestError) as missing:
        await files.read_text_file({"sessionId": SESSION, "path": str(workspace / "nope.txt")})
    assert missing.value.code == RESOURCE_NOT_FOUND
    assert files.refused == [*outside, outside[0]]


async def _run_terminal(service: TerminalService, **params: Any) -> tuple[str, dict[str, Any]]:
    created = await service.create({"sessionId": SESSION, **params})
    terminal = {"sessionId": SESSION, "terminalId": created["terminalId"]}
    with anyio.fail_after(10):
        await service.wait_for_exit(terminal)
    return created["terminalId"], await service.output(terminal)


async def test_terminals_run_in_the_workspace_keep_the_output_end_and_are_released(workspace: Path) -> None:
    async with anyio.create_task_group() as tg:
        service = TerminalService(workspace, dict(os.environ), tg)
        script = "import os; print(os.getcwd()); print('é' * 50, end='')"
        _, output = await _run_terminal(service, command=sys.executable, args=["-c", script])
        assert output["output"].startswith(str(workspace)) and not output["truncated"]
        assert output["exitStatus"] == {"exitCode": 0, "signal": None}
        terminal_id, cut = await _run_terminal(service, command=sys.executable, args=["-c", script], outputByteLimit=11)
        assert cut == {"output": "é" * 5, "truncated": True, "exitStatus": {"exitCode": 0, "signal": None}}
        assert service.live_ids() == ["term_1", terminal_id]
        await service.release({"sessionId": SESSION, "terminalId": terminal_id})
        assert service.live_ids() == ["term_1"]
        with pytest.raises(RequestError) as gone:
            await service.output({"sessionId": SESSION, "terminalId": terminal_id})
        assert gone.value.code == RESOURCE_NOT_FOUND
        await service.close()


async def test_kill_ends_the_whole_process_group_and_the_terminal_stays_readable(workspace: Path) -> None:
    async with anyio.create_task_group() as tg:
        service = TerminalService(workspace, dict(os.environ), tg)
        created = await service.create(
            {"sessionId": SESSION, "command": "/bin/sh", "args": ["-c", "echo up; sleep 60"]}
        )
        terminal = {"sessionId": SESSION, "terminalId": created["terminalId"]}
        await service.kill(terminal)
        with anyio.fail_after(10):
            status = await service.wait_for_exit(terminal)
        assert status == {"exitCode": None, "signal": "SIGTERM"}  # the group got SIGTERM (SIGKILL after a grace)
        assert (await service.output(terminal))["exitStatus"] == status
        with pytest.raises(RequestError) as outside:
            await service.create({"sessionId": SESSION, "command": "true", "cwd": str(workspace.parent)})
        assert outside.value.code == RESOURCE_NOT_FOUND
        await service.close()


def _client(workspace: Path, tg: anyio.abc.TaskGroup, profile: Profile, policy: PermissionPolicy) -> EvalClient:
    return EvalClient(profile, policy, FileService(workspace), TerminalService(workspace, {}, tg), lambda cost: None)


async def test_permission_requests_are_answered_by_policy_and_cancelled_while_cancelling(workspace: Path) -> None:
    request = {"sessionId": SESSION, "toolCall": {"toolCallId": "c1"}, "options": OPTIONS}
    async with anyio.create_task_group() as tg:
        allow = _client(workspace, tg, "editor", "allow")
        reject = _client(workspace, tg, "editor", "reject")
        assert await allow.handle_request("session/request_permission", request) == {
            "outcome": {"outcome": "selected", "optionId": "yes"}
        }
        assert await reject.handle_request("session/request_permission", request) == {
            "outcome": {"outcome": "selected", "optionId": "no"}
        }
        allow.cancelling = True
        assert await allow.handle_request("session/request_permission", request) == {
            "outcome": {"outcome": "cancelled"}
        }
        assert allow.seen.permission_requests == 2


async def test_the_bare_profile_refuses_fs_and_terminals_and_records_the_violation(workspace: Path) -> None:
    async with anyio.create_task_group() as tg:
        bare = _client(workspace, tg, "bare", "allow")
        with pytest.raises(RequestError) as caught:
            await bare.handle_request("fs/read_text_file", {"sessionId": SESSION, "path": str(workspace / "notes.txt")})
        assert caught.value.code == METHOD_NOT_FOUND
        assert bare.seen.protocol_violations == [
            "agent called fs/read_text_file, which the bare client did not advertise"
        ]


async def test_updates_give_the_final_answer_plan_usage_and_tool_calls(workspace: Path) -> None:
    costs: list[float] = []
    async with anyio.create_task_group() as tg:
        client = EvalClient("editor", "allow", FileService(workspace), TerminalService(workspace, {}, tg), costs.append)

        async def update(**fields: Any) -> None:
            await client.handle_notification("session/update", {"sessionId": SESSION, "update": fields})

        text = {"type": "text", "text": "Let me look."}
        await update(sessionUpdate="agent_message_chunk", content=text, messageId="m1")
        await update(sessionUpdate="tool_call", toolCallId="t1", title="Read")
        await update(sessionUpdate="usage_update", used=120, size=1000, cost={"amount": 0.5, "currency": "USD"})
        await update(sessionUpdate="plan", entries=[{"content": "a", "priority": "high", "status": "pending"}])
        for piece in ("The answer ", "is 42."):
            await update(sessionUpdate="agent_message_chunk", content={"type": "text", "text": piece}, messageId="m2")
        await update(sessionUpdate="usage_update", used=200, size=1000, cost={"amount": 0.75, "currency": "USD"})
    seen = client.seen
    assert seen.answer == "The answer is 42."
    assert (seen.tool_calls, seen.model_requests, seen.tokens, seen.cost_usd) == (1, 2, 320, 0.75)
    assert seen.plan == [{"content": "a", "priority": "high", "status": "pending"}]
    assert costs == [0.5, 0.75]


async def _fake_turn(workspace: Path, tmp_path: Path, *flags: str) -> tuple[Attempt, EvalClient, WireLog]:
    """One prompt turn against tests/evals/fake_agent.py, through the harness's own session code."""
    task_dir = tmp_path / "task"
    (task_dir / "workspace").mkdir(parents=True)
    (task_dir / "instruction.md").write_text("Spend money.")
    (task_dir / "task.toml").write_text('id = "t"\ndescription = "d"\n[verifier]\ncommand = "true"\n')
    task = Task.from_dir(task_dir)
    wire = WireLog(tmp_path / "transcript.jsonl")
    fake = [sys.executable, str(Path(__file__).with_name("fake_agent.py")), *flags]
    cost = CostGuard(1.0)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            client = EvalClient("editor", "allow", FileService(workspace), TerminalService(workspace, {}, tg), cost)
            stderr = tmp_path / "err.log"
            launch = launch_agent(client, wire, env=dict(os.environ), cwd=tmp_path, stderr_path=stderr, command=fake)
            async with launch as agent:
                session = await open_session(agent.connection, client, task, str(workspace))
                attempt = await prompt_turn(agent.connection, client, session, "go", budget=20, cost=cost)
    wire.close()
    return attempt, client, wire


async def test_a_turn_whose_cost_passes_the_cap_is_cancelled(workspace: Path, tmp_path: Path) -> None:
    attempt, client, wire = await _fake_turn(workspace, tmp_path)
    assert (attempt.limit_hit, attempt.stop_reason, attempt.error) == ("cost_limit", "cancelled", None)
    assert client.seen.cost_usd == 5.0 and not wire.violations
    assert "session/cancel" in methods(tmp_path / "transcript.jsonl", "client")


async def test_an_agent_line_that_breaks_the_schema_is_recorded(workspace: Path, tmp_path: Path) -> None:
    attempt, _, wire = await _fake_turn(workspace, tmp_path, "--bad")
    assert attempt.stop_reason == "done"
    [violation] = wire.violations
    assert "stopReason" in violation and "done" in violation
