"""`run_command`: in the editor's terminal when it offers one (shown live), else a local one; always released."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import anyio
import pytest
from pydantic import ValidationError

from coder_agent.acp.schema import TerminalContent
from coder_agent.agent.tools.base import Intent, ToolContext, ToolError
from coder_agent.agent.tools.run_command import RunCommand
from tests.support.shell_fixtures import alive_in_group, bare_session, call, fifo, local_ctx, read_fifo, terminal_editor

pytestmark = pytest.mark.anyio
__all__ = ["fifo", "local_ctx"]  # fixtures


async def prepare(ctx: ToolContext, **arguments: object) -> Intent:
    tool = RunCommand()
    return await tool.prepare(tool.parse(arguments), ctx)


async def test_the_intent_is_the_command_itself(local_ctx: ToolContext) -> None:
    intent = await prepare(local_ctx, command="ls -la | wc -l")
    assert (intent.title, intent.kind, intent.effect, intent.command) == (
        "ls -la | wc -l",
        "execute",
        "execute",
        "ls -la | wc -l",
    )
    assert intent.locations == [] and intent.content == []


async def test_a_long_command_gets_a_short_title_and_is_shown_in_full(local_ctx: ToolContext) -> None:
    command = "echo " + "x" * 300 + "\necho done"
    intent = await prepare(local_ctx, command=command)
    assert len(intent.title) == 120 and intent.title.endswith("…") and "\n" not in intent.title
    assert intent.command == command
    assert command in intent.content[0].content.text  # type: ignore[union-attr]


async def test_cwd_is_relative_to_the_session_and_must_be_a_directory(local_ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "file").write_text("")
    result = await call(RunCommand(), local_ctx, command="pwd", cwd="sub")
    assert str(tmp_path / "sub") in result.output
    for bad in ("missing", "file"):
        with pytest.raises(ToolError, match="not an existing directory"):
            await prepare(local_ctx, command="pwd", cwd=bad)


def test_the_timeout_is_bounded_and_the_schema_describes_every_argument() -> None:
    tool = RunCommand()
    assert tool.parse({"command": "x"}).timeout == 120
    with pytest.raises(ValidationError):
        tool.parse({"command": "x", "timeout": 1801})
    spec = tool.spec()["function"]
    assert spec["name"] == "run_command" and "/bin/sh -c" in spec["description"]
    properties = spec["parameters"]["properties"]
    assert properties["timeout"]["maximum"] == 1800
    assert all(field.get("description") for field in properties.values())
    assert not tool.read_only


async def test_locally_a_non_zero_exit_is_a_normal_result(local_ctx: ToolContext) -> None:
    with anyio.fail_after(10):
        result = await call(RunCommand(), local_ctx, command="echo broken >&2; exit 2")
    assert not result.failed
    assert result.output == "Exit code 2.\nbroken"
    assert result.content[0].content.text == "```\nbroken\n```\nExit code 2."  # type: ignore[union-attr]
    assert result.raw_output["exit_code"] == 2


async def test_locally_a_timeout_fails_the_call_and_keeps_the_output(local_ctx: ToolContext) -> None:
    with anyio.fail_after(10):
        result = await call(RunCommand(), local_ctx, command="echo started; sleep 30", timeout=0.5)
    assert result.failed
    assert result.output == "Timed out after 0.5 s; the command was killed.\nstarted"


async def test_locally_the_output_is_capped_from_the_start(local_ctx: ToolContext) -> None:
    with anyio.fail_after(10):
        result = await call(RunCommand(output_limit=100), local_ctx, command="seq 1 1000")
    lines = result.output.splitlines()
    assert lines[0] == "Exit code 0."
    assert lines[1].startswith("(output truncated: the first ") and lines[-1] == "1000"
    assert len("\n".join(lines[2:])) < 100


async def test_in_a_terminal_the_calls_come_in_order_and_the_terminal_is_shown(tmp_path: Path) -> None:
    with anyio.fail_after(10):
        async with terminal_editor(tmp_path) as (editor, ctx):
            result = await call(RunCommand(), ctx, command="printf 'a\\nb\\n' | wc -l; exit 4")
    assert editor.calls == ["create", "progress", "wait", "output", "release"]
    assert editor.created == [
        {
            "command": "/bin/sh",
            "args": ["-c", "printf 'a\\nb\\n' | wc -l; exit 4"],
            "cwd": str(tmp_path),
            "limit": 30_000,
        }
    ]
    assert editor.progressed == [[TerminalContent(terminal_id="term-1")]]
    assert result.content == [TerminalContent(terminal_id="term-1")]
    assert not result.failed
    assert result.output.split("\n") == ["Exit code 4.", "2"]


async def test_in_a_terminal_a_timeout_kills_then_reads_then_releases(tmp_path: Path) -> None:
    with anyio.fail_after(10):
        async with terminal_editor(tmp_path) as (editor, ctx):
            result = await call(RunCommand(), ctx, command="echo hi; sleep 30", timeout=0.5)
    assert editor.calls == ["create", "progress", "wait", "kill", "output", "release"]
    assert result.failed
    assert result.output == "Timed out after 0.5 s; the command was killed.\nhi"


async def test_in_a_terminal_cancellation_kills_and_releases(tmp_path: Path, fifo: Path) -> None:
    with anyio.fail_after(10):
        async with terminal_editor(tmp_path) as (editor, ctx):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(partial(call, RunCommand(), ctx, command=f"echo $$ > {fifo}; sleep 30"))
                pgid = int(await read_fifo(fifo))
                await editor.waiting.wait()
                tasks.cancel_scope.cancel()
            assert editor.calls == ["create", "progress", "wait", "kill", "release"]
            assert alive_in_group(pgid) == [] and editor.live_ids() == []  # killed, not finished


async def test_in_a_terminal_a_broken_terminal_is_still_released(tmp_path: Path) -> None:
    with anyio.fail_after(10):
        async with terminal_editor(tmp_path, fail_output=True) as (editor, ctx):
            with pytest.raises(ToolError, match="the terminal broke"):
                await call(RunCommand(), ctx, command="true")
    assert editor.calls == ["create", "progress", "wait", "output", "kill", "release"]


async def test_without_a_terminal_capability_no_terminal_method_is_called_and_none_is_embedded(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(10):
        async with bare_session(tmp_path) as (client, ctx):
            result = await call(RunCommand(), ctx, command="echo local")
    assert result.output == "Exit code 0.\nlocal"
    assert result.content[0].content.text == "```\nlocal\n```"  # type: ignore[union-attr]
    assert client.calls == [] and client.progressed == []
