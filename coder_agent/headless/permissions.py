"""Answering the permission questions of a headless run.

The session's mode decides whether a call asks at all (`agent.permissions.decide`). When one does, an
interactive run asks on the terminal — y(es) / n(o) / a(lways) / N(ever) — and any other run answers
"reject" and says so in its output: nobody is there to answer, and a script must not hang.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import anyio
from rich.console import Console
from rich.markup import escape

from ..acp.schema import ContentToolCallContent, PermissionOption, PermissionOutcome, TextContent, ToolCallFields
from ..acp.schema.client import PermissionKind
from .output import Output

_ANSWERS: dict[str, PermissionKind] = {
    "y": "allow_once",
    "yes": "allow_once",
    "a": "allow_always",
    "always": "allow_always",
    "n": "reject_once",
    "no": "reject_once",
    "": "reject_once",
    "never": "reject_always",
}

UNASKED_NOTE = "needs permission and there is no terminal to ask: rejected (--yes allows every call)"


def answer_kind(answer: str) -> PermissionKind | None:
    """The option kind a typed answer picks: `N` is "never", any other case of n/no is "no"."""
    answer = answer.strip()
    if answer == "N":
        return "reject_always"
    return _ANSWERS.get(answer.lower())


def _outcome(options: Sequence[PermissionOption], kind: PermissionKind) -> PermissionOutcome:
    for option in options:
        if option.kind == kind:
            return PermissionOutcome(outcome="selected", option_id=option.option_id)
    if kind.startswith("reject"):
        return PermissionOutcome(outcome="cancelled")
    return _outcome(options, "allow_once")


class RejectUnasked:
    """Every question is answered "reject", and the output says so."""

    def __init__(self, output: Output) -> None:
        self._output = output

    async def decide(self, tool_call: ToolCallFields, options: Sequence[PermissionOption]) -> PermissionOutcome:
        outcome = _outcome(options, "reject_once")
        self._output.permission(tool_call, outcome.option_id, UNASKED_NOTE)
        return outcome


class LineReader:
    """Lines typed on `fd` (a terminal), read without blocking the event loop."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buffer = b""
        self._ended = False

    async def line(self) -> str | None:
        """The next line, without its end; None once the input has ended."""
        while b"\n" not in self._buffer and not self._ended:
            await anyio.wait_readable(self._fd)
            chunk = os.read(self._fd, 1024)
            self._buffer += chunk
            self._ended = not chunk
        if not self._buffer:
            return None
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode(errors="replace")


class TerminalAsk:
    """Asks on the terminal (the question on stderr, the answer from stdin), one question at a time."""

    def __init__(self, output: Output, console: Console, stdin_fd: int = 0) -> None:
        self._output = output
        self._console = console
        self._input = LineReader(stdin_fd)
        self.lock = anyio.Lock()  # the terminal's: the agent's other questions (`questions.py`) take it too

    @property
    def reader(self) -> LineReader:
        """The terminal's lines: one reader for every question, so that none reads another's answer."""
        return self._input

    async def decide(self, tool_call: ToolCallFields, options: Sequence[PermissionOption]) -> PermissionOutcome:
        async with self.lock:
            with self._output.paused():
                return await self._ask(tool_call, options)

    async def _ask(self, tool_call: ToolCallFields, options: Sequence[PermissionOption]) -> PermissionOutcome:
        choices = legend(options)
        title = tool_call.title or "this tool call"
        question = title if title.rstrip().endswith("?") else f"Allow {title}?"
        self._console.print(f"[bold yellow]?[/] [bold]{escape(question)}[/]")
        for text in _texts(tool_call):  # what the call would do, when the title does not say it all (a project's
            for row in text.splitlines():  # MCP servers: the commands they would start)
                self._console.print(f"  {escape(row)}", style="dim", highlight=False)
        for key, option in choices.items():  # one a line: an "always" names what it keeps, which is long
            enter = "  [dim](Enter)[/]" if key == ENTER else ""
            self._console.print(f"  [bold]{key}[/]  {escape(option.name)}{enter}", soft_wrap=True)
        while True:
            self._console.print("  [bold]>[/] ", end="")
            line = await self._input.line()
            if line is None:  # end of input: nobody can answer any more
                self._console.print()
                return _outcome(options, "reject_once")
            chosen = choice_of(line, choices)
            if chosen is not None and not chosen.option_id:  # no "reject once" was offered: nothing chosen
                return PermissionOutcome(outcome="cancelled")
            if chosen is not None:
                return PermissionOutcome(outcome="selected", option_id=chosen.option_id)
            keys = ", ".join(choices)
            self._console.print(f"  Answer {keys} (Enter alone is {ENTER}: {escape(choices[ENTER].name)}).")


ENTER = "n"  # what Enter alone answers: the safe answer


def legend(options: Sequence[PermissionOption]) -> dict[str, PermissionOption]:
    """The key for each option offered, in the order shown: the option a key picks is the one its name shows
    (the first of its kind). `n` is always there: without a "reject once" option it cancels the request."""
    keys: dict[str, PermissionOption] = {}
    for key, kind in (("y", "allow_once"), ("a", "allow_always"), ("n", "reject_once"), ("N", "reject_always")):
        option = next((option for option in options if option.kind == kind), None)
        if option is not None:
            keys[key] = option
    keys.setdefault(ENTER, PermissionOption(option_id="", name="Reject", kind="reject_once"))
    return keys


def choice_of(answer: str, choices: dict[str, PermissionOption]) -> PermissionOption | None:
    """The option a typed answer picks among `choices` (`legend`), or None when it picks none."""
    kind = answer_kind(answer)
    return next((option for option in choices.values() if option.kind == kind), None) if kind else None


def _texts(tool_call: ToolCallFields) -> list[str]:
    return [
        item.content.text
        for item in tool_call.content or []
        if isinstance(item, ContentToolCallContent) and isinstance(item.content, TextContent)
    ]
