"""The pieces of `coder-agent run` that need no process: answers, diffs, the terminal output, the usage tally."""

from __future__ import annotations

import io
import os
import random

import anyio
import pytest
from rich.console import Console

from coder_agent.acp.schema import (
    AgentMessageChunk,
    ContentToolCallContent,
    Cost,
    DiffContent,
    PermissionOption,
    TextContent,
    ToolCallFields,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
)
from coder_agent.headless.blocks import diff_text, output_tail
from coder_agent.headless.output import JsonOutput, RunResult, UsageTally
from coder_agent.headless.permissions import TerminalAsk, answer_kind
from coder_agent.headless.render import RichOutput

OPTIONS = [
    PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
    PermissionOption(option_id="always", name="Always allow", kind="allow_always"),
    PermissionOption(option_id="no", name="Reject", kind="reject_once"),
    PermissionOption(option_id="never", name="Always reject", kind="reject_always"),
]


@pytest.mark.parametrize(
    ("typed", "kind"),
    [
        ("y\n", "allow_once"),
        ("YES", "allow_once"),
        ("a", "allow_always"),
        ("n", "reject_once"),
        ("", "reject_once"),
        ("N", "reject_always"),
        ("never", "reject_always"),
        ("maybe", None),
    ],
)
def test_typed_answers_pick_an_option_kind(typed: str, kind: str | None) -> None:
    assert answer_kind(typed) == kind


@pytest.mark.anyio
async def test_the_terminal_question_reads_answers_until_one_is_understood() -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, b"what?\nN\n")
    asked = TerminalAsk(JsonOutput(io.BytesIO()), Console(file=io.StringIO()), read_end)
    try:
        with anyio.fail_after(5):
            outcome = await asked.decide(ToolCallFields(tool_call_id="c", title="rm -rf build"), OPTIONS)
    finally:
        os.close(read_end)
        os.close(write_end)
    assert (outcome.outcome, outcome.option_id) == ("selected", "never")


async def ask(answers: bytes, tool_call: ToolCallFields, options: list[PermissionOption]) -> tuple[str, str]:
    """The terminal question answered with `answers`: (the option chosen, what the terminal showed)."""
    read_end, write_end = os.pipe()
    os.write(write_end, answers)
    shown = io.StringIO()
    asked = TerminalAsk(JsonOutput(io.BytesIO()), Console(file=shown, width=200), read_end)
    try:
        with anyio.fail_after(5):
            outcome = await asked.decide(tool_call, options)
    finally:
        os.close(read_end)
        os.close(write_end)
    return str(outcome.option_id), shown.getvalue()


@pytest.mark.anyio
async def test_each_key_picks_the_option_its_legend_names_and_the_legend_says_what_enter_means() -> None:
    """Before: `a` showed the last "always" option's name (all projects) and picked the first (this session)."""
    options = [
        PermissionOption(option_id="allow_once", name="Allow", kind="allow_once"),
        PermissionOption(option_id="session", name="Always allow `make` commands in this session", kind="allow_always"),
        PermissionOption(option_id="everywhere", name="Always allow `make` commands everywhere", kind="allow_always"),
        PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
    ]
    chosen, shown = await ask(b"a\n", ToolCallFields(tool_call_id="c", title="Run `make`"), options)
    assert chosen == "session"
    assert "  a  Always allow `make` commands in this session\n" in shown and "everywhere" not in shown
    assert "  n  Reject  (Enter)\n" in shown
    assert (await ask(b"\n", ToolCallFields(tool_call_id="c", title="Run `make`"), options))[0] == "reject_once"


@pytest.mark.anyio
async def test_a_question_that_is_a_question_is_asked_as_it_is_with_what_it_would_start() -> None:
    """Before: "? Allow Start the MCP servers of …??", and the commands only with --json."""
    listed = "The project's .mcp.json names MCP servers:\n- docs: python docs_server.py --stdio"
    call = ToolCallFields(
        tool_call_id="c",
        title="Start the MCP servers of /w/.mcp.json?",
        content=[ContentToolCallContent(content=TextContent(text=listed))],
    )
    chosen, shown = await ask(b"y\n", call, OPTIONS)
    assert chosen == "yes"
    assert "? Start the MCP servers of /w/.mcp.json?\n" in shown and "Allow Start" not in shown
    assert "  - docs: python docs_server.py --stdio" in shown


def test_a_new_file_diffs_from_dev_null() -> None:
    text = diff_text(DiffContent(path="/w/src/new.py", old_text=None, new_text="x = 1\n"), "/w").plain
    assert "--- /dev/null" in text
    assert "+++ b/src/new.py" in text
    assert "+x = 1" in text


def test_a_change_difflib_would_take_seconds_over_is_summed_up_not_diffed() -> None:
    numbers = [f"{number}\n" for number in range(100_000)]
    shuffled = list(numbers)
    random.Random(3).shuffle(shuffled)
    diff = DiffContent(path="/w/numbers.txt", old_text="".join(numbers), new_text="".join(shuffled))
    text = diff_text(diff, "/w").plain
    assert text == "  (numbers.txt: 100,000 lines -> 100,000, a change too large to show here)\n"
    edited = [*numbers[:50_000], "fifty thousand\n", *numbers[50_001:]]  # as large, but one line changed: shown
    lines = diff_text(DiffContent(path="/w/numbers.txt", old_text="".join(numbers), new_text="".join(edited)), "/w")
    assert "  -50000\n  +fifty thousand\n" in lines.plain


def test_command_output_keeps_its_end() -> None:
    text = output_tail("```\n" + "\n".join(f"line {i}" for i in range(100)) + "\n```", limit=5).plain
    assert text.splitlines() == ["  … 95 earlier lines", *(f"  line {i}" for i in range(95, 100))]


def test_the_usage_tally_counts_this_runs_tokens_and_cost() -> None:
    tally = UsageTally(cost_baseline_usd=0.5)
    tally.observe(UsageUpdate(used=100, size=1000, cost=Cost(amount=0.75)))
    tally.observe(UsageUpdate(used=150, size=1000, cost=Cost(amount=1.0)))
    assert tally.wire() == {
        "modelCalls": 2,
        "totalTokens": 250,
        "contextTokens": 150,
        "contextWindow": 1000,
        "costUsd": 0.5,
    }


def test_piped_output_prints_each_message_whole_then_the_calls_and_the_summary() -> None:
    buffer = io.StringIO()
    output = RichOutput(Console(file=buffer, width=200), Console(file=io.StringIO()), "/w")
    for piece in ("Looking ", "at **it**."):
        output.update(AgentMessageChunk(content=TextContent(text=piece), message_id="m1"))
    assert buffer.getvalue() == ""  # not complete yet
    output.update(ToolCallStart(tool_call_id="c1", title="make test", kind="execute"))
    output.update(ToolCallProgress(tool_call_id="c1", status="in_progress"))
    done = ContentToolCallContent(content=TextContent(text="```\n3 passed\n```"))
    output.update(ToolCallProgress(tool_call_id="c1", status="completed", content=[done]))
    output.result(RunResult("end_turn", "sess_1", 2.0))
    assert buffer.getvalue().splitlines() == [
        "Looking at **it**.",
        "✓ make test",
        "  3 passed",
        "── end_turn · 0 tokens · 2.0 s",
        "   session sess_1",
    ]


def test_a_question_answered_unasked_shows_what_it_would_have_started() -> None:
    """Before: a project's MCP servers' commands were in `--json` only."""
    buffer = io.StringIO()
    output = RichOutput(Console(file=buffer, width=200), Console(file=io.StringIO()), "/w")
    listed = "The project's .mcp.json names MCP servers:\n- docs: python docs_server.py --stdio"
    call = ToolCallFields(
        tool_call_id="c",
        title="Start the MCP servers of /w/.mcp.json?",
        content=[ContentToolCallContent(content=TextContent(text=listed))],
    )
    output.permission(call, "reject_once", "no terminal to ask: rejected")
    assert "  - docs: python docs_server.py --stdio" in buffer.getvalue().splitlines()
