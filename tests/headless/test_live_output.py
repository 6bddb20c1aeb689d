"""The live terminal view of `coder-agent run`: what stays on the screen once the run is over."""

from __future__ import annotations

import io
import threading

from rich.console import Console

from coder_agent.acp.schema import AgentMessageChunk, TextContent, ToolCallProgress, ToolCallStart
from coder_agent.headless.output import RunResult
from coder_agent.headless.render import RichOutput
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
