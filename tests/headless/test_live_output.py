"""The live terminal view of `coder-agent run`: what stays on the screen once the run is over."""

from __future__ import annotations

import io
import threading
from pathlib import Path

import anyio
import pytest
from rich.console import Console

from coder_agent.acp.schema import (
    AgentMessageChunk,
    ContentToolCallContent,
    TextContent,
    ToolCallProgress,
    ToolCallStart,
)
from coder_agent.headless.output import RunResult
from coder_agent.headless.permissions import RejectUnasked
from coder_agent.headless.render import RichOutput
from coder_agent.headless.run import RunRequest, run_prompt
from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.inproc import test_settings as agent_settings
from tests.support.screen import Screen

WIDTH = 40
PIECES = ["Hello ", "**world**, this is ", "streamed.\n\nSecond ", "paragraph here."]


def terminal() -> tuple[Console, io.StringIO]:
    file = io.StringIO()
    console = Console(file=file, force_terminal=True, force_interactive=True, width=WIDTH, height=20, highlight=False)
    return console, file


def stream(output: RichOutput) -> None:
    for piece in PIECES:
        output.update(AgentMessageChunk(content=TextContent(text=piece), message_id="m1"))


def test_text_streamed_before_ctrl_c_is_on_the_screen_once() -> None:
    console, file = terminal()
    output = RichOutput(console, Console(file=io.StringIO()), "/w")
    stream(output)
    output.refresh()  # the live area shows the text, its last line padded to the full width
    file.write("^C")  # what the terminal echoes, where the cursor is, when the user presses Ctrl-C
    output.notice("Cancelling…")
    output.refresh()
    output.result(RunResult("cancelled", "sess_1", 1.5))
    screen = Screen(WIDTH)
    screen.feed(file.getvalue())
    assert screen.lines() == [
        "Cancelling…",
        "Hello world, this is streamed.",
        "",
        "Second paragraph here.",
        "── cancelled · 0 tokens · 1.5 s",
        "   session sess_1",
    ]


def test_the_live_area_is_drawn_by_the_callers_thread_alone() -> None:
    # A refresh thread of its own would race with the prints: both move the cursor from the same place.
    console, file = terminal()
    output = RichOutput(console, Console(file=io.StringIO()), "/w")
    threads = threading.active_count()
    stream(output)
    output.update(ToolCallStart(tool_call_id="c1", title="make test", kind="execute", status="in_progress"))
    assert threading.active_count() == threads
    drawn = len(file.getvalue())
    output.refresh()
    assert len(file.getvalue()) > drawn  # the spinner's next frame
    output.update(ToolCallProgress(tool_call_id="c1", status="completed"))
    output.result(RunResult("end_turn", "sess_1", 1.0))
    screen = Screen(WIDTH)
    screen.feed(file.getvalue())
    assert screen.lines() == [
        "Hello world, this is streamed.",
        "",
        "Second paragraph here.",
        "✓ make test",
        "── end_turn · 0 tokens · 1.0 s",
        "   session sess_1",
    ]


class _Watched(io.StringIO):
    """A terminal's output: `seen` is set once `needle` is on it."""

    def __init__(self, needle: str) -> None:
        super().__init__()
        self.needle = needle
        self.seen = anyio.Event()

    def write(self, text: str) -> int:
        written = super().write(text)
        if self.needle in self.getvalue():
            self.seen.set()
        return written


@pytest.mark.anyio
async def test_a_commands_output_is_on_the_screen_while_it_runs(
    srv: ScriptedModelServer, tmp_path: Path, workspace: Path, root_logging: None
) -> None:
    """Before: nothing of a command's output until it ended (a test suite's minutes of silence)."""
    command = "echo first-line; while [ ! -e go ]; do sleep 0.05; done; echo second-line; exit 3"
    srv.enqueue(Reply.tool_calls([tool_call("run_command", {"command": command})]), Reply.text("Ran."))
    file = _Watched("first-line")
    console = Console(file=file, force_terminal=True, force_interactive=True, width=200, height=30, highlight=False)
    output = RichOutput(console, Console(file=io.StringIO()), str(workspace))
    request = RunRequest(prompt="run it", cwd=str(workspace), mode="bypass")
    results: list[RunResult] = []

    async def run() -> None:
        results.append(
            await run_prompt(agent_settings(tmp_path / "home", srv.url), request, output, RejectUnasked(output))
        )

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(run)
        with anyio.fail_after(60):
            await file.seen.wait()  # on the screen while the command still waits for `go`
        assert not (workspace / "go").exists() and not results
        (workspace / "go").touch()
    output.result(results[0])
    screen = Screen(200)
    screen.feed(file.getvalue())
    lines = screen.lines()
    assert results[0].stop_reason == "end_turn"
    at = lines.index(f"✓ {command}")
    assert lines[at + 1 : at + 4] == ["  first-line", "  second-line", "  (exit code 3)"]


def test_a_compaction_shows_what_it_freed() -> None:
    """Before: a compaction (a `think` tool call) showed nothing in `coder-agent run` or `sessions show`."""
    buffer = io.StringIO()
    output = RichOutput(Console(file=buffer, width=200), Console(file=io.StringIO()), "/w")
    output.update(ToolCallStart(tool_call_id="compact_1", title="Compacting the conversation", kind="think"))
    note = "Context in use: ~41,000 -> ~12,000 tokens of 128,000 (~29,000 freed)."
    summary = "The user asked for ..."
    content = [ContentToolCallContent(content=TextContent(text=text)) for text in (note, summary)]
    output.update(ToolCallProgress(tool_call_id="compact_1", status="completed", content=content))
    assert buffer.getvalue().splitlines() == [f"✓ Compacted the conversation  {note}"]
