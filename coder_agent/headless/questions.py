"""Asking the user on the terminal what an editor would ask in a form or at a URL (`elicitation/create`).

`coder-agent run` on a terminal answers the agent's questions here: `ask_user`'s, and those of the run's MCP
servers. A form is asked field by field (the question on stderr, the answer from stdin, as the permission
questions are): a number picks a choice, several numbers several choices, Enter skips a field that is not
required, `!` declines the whole form and the end of input (Ctrl-D) dismisses it. A URL is shown, and the user
says whether they will open it. Without a terminal (or with `--yes`) there is no `TerminalQuestions`: nobody is
asked, and the agent is told so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import anyio
from rich.console import Console
from rich.markup import escape

from ..acp.schema import (
    BooleanProperty,
    CreateElicitationRequest,
    CreateElicitationResponse,
    ElicitationMode,
    ElicitationSchema,
    IntegerProperty,
    MultiSelectProperty,
    NumberProperty,
    StringProperty,
)
from .output import Output
from .permissions import LineReader

TRIES = 3  # answers that cannot be read, per field, before the form counts as dismissed
DECLINE = "!"


class _Ended(Exception):
    """The input ended, or the user gave up on a field: the form is dismissed."""


class _Declined(Exception):
    """The user typed `!`."""


def choice_names(field: StringProperty | MultiSelectProperty) -> list[tuple[str, str, str | None]]:
    """(value, label, description) of each choice of a field of choices."""
    if isinstance(field, MultiSelectProperty):
        if field.items.any_of is not None:
            return [(o.const, o.title, o.description) for o in field.items.any_of]
        return [(value, value, None) for value in field.items.enum or []]
    if field.one_of is not None:
        return [(o.const, o.title, o.description) for o in field.one_of]
    return [(value, value, None) for value in field.enum or []]


def parse(field: Any, line: str) -> tuple[Any, str | None]:
    """The value a typed line gives the field, or why it cannot be read."""
    if isinstance(field, BooleanProperty):
        answer = line.strip().lower()
        if answer in ("y", "yes"):
            return True, None
        if answer in ("n", "no"):
            return False, None
        return None, "Answer y or n."
    if isinstance(field, IntegerProperty | NumberProperty):
        try:
            number = int(line) if isinstance(field, IntegerProperty) else float(line)
        except ValueError:
            return None, "Type a whole number." if isinstance(field, IntegerProperty) else "Type a number."
        return number, None
    if isinstance(field, MultiSelectProperty) or (isinstance(field, StringProperty) and field.choices()):
        names = choice_names(field)
        picked = []
        for word in line.replace(",", " ").split():
            if not word.isdigit() or not 1 <= int(word) <= len(names):
                return None, f"Type a number from 1 to {len(names)}" + (
                    " (several, separated by spaces)." if isinstance(field, MultiSelectProperty) else "."
                )
            picked.append(names[int(word) - 1][0])
        if isinstance(field, MultiSelectProperty):
            return list(dict.fromkeys(picked)), None
        if len(picked) != 1:
            return None, "Type one number."
        return picked[0], None
    return line, None


class TerminalQuestions:
    """Asks on the terminal (the question on stderr, the answer from stdin), one question at a time; shares the
    terminal's reader and lock with the permission questions (`TerminalAsk`)."""

    def __init__(self, output: Output, console: Console, reader: LineReader, lock: anyio.Lock) -> None:
        self._output = output
        self._console = console
        self._input = reader
        self._lock = lock
        self._urls: dict[str, str] = {}  # elicitation id -> the host it sent the user to

    def modes(self) -> frozenset[ElicitationMode]:
        return frozenset(("form", "url"))

    async def ask(self, request: CreateElicitationRequest) -> CreateElicitationResponse:
        async with self._lock:
            with self._output.paused():
                try:
                    if request.mode == "url":
                        return await self._url(request)
                    assert request.requested_schema is not None
                    content = await self._form(request.message, request.requested_schema)
                except _Declined:
                    self._console.print("  Declined.")
                    return CreateElicitationResponse(action="decline")
                except _Ended:
                    self._console.print("  Dismissed.")
                    return CreateElicitationResponse(action="cancel")
                return CreateElicitationResponse(action="accept", content=content)

    async def completed(self, elicitation_id: str) -> None:
        host = self._urls.pop(elicitation_id, None)
        if host is not None:
            self._console.print(f"[green]✓[/] The step at {escape(host)} is done.")

    async def _url(self, request: CreateElicitationRequest) -> CreateElicitationResponse:
        url = request.url or ""
        host = urlsplit(url).hostname or url
        self._console.print(f"[bold yellow]?[/] {escape(request.message)}")
        self._console.print(f"  Open [bold]{escape(url)}[/] (at [bold]{escape(host)}[/]) in your browser?")
        answer = await self._line("  y(es) / n(o) > ")
        if answer.strip().lower() not in ("y", "yes"):
            return CreateElicitationResponse(action="decline")
        self._urls[request.elicitation_id or url] = host
        self._console.print(f"  Open it yourself: {escape(url)}")
        return CreateElicitationResponse(action="accept")

    async def _form(self, message: str, form: ElicitationSchema) -> dict[str, Any]:
        self._console.print(f"[bold yellow]?[/] {escape(message)}  [dim](! declines, Ctrl-D dismisses)[/]")
        required = set(form.required or ())
        content: dict[str, Any] = {}
        for name, field in form.properties.items():
            value = await self._field(name, field, name in required)
            if value is not None:
                content[name] = value
        return content

    async def _field(self, name: str, field: Any, required: bool) -> Any:
        title = field.title or name
        self._console.print(f"  [bold]{escape(title)}[/]" + ("" if required else " [dim](Enter skips)[/]"))
        if field.description:
            self._console.print(f"  [dim]{escape(field.description)}[/]")
        if isinstance(field, MultiSelectProperty | StringProperty) and choice_names(field):
            self._choices(choice_names(field))
        for _ in range(TRIES):
            line = (await self._line("  > ")).strip()
            if line == DECLINE:
                raise _Declined
            if not line and not required:
                return None
            value, problem = parse(field, line) if line else (None, "An answer is needed.")
            if problem is None:
                return value
            self._console.print(f"  {escape(problem)}")
        raise _Ended

    def _choices(self, names: Sequence[tuple[str, str, str | None]]) -> None:
        for number, (_, label, description) in enumerate(names, 1):
            more = f" [dim]— {escape(description)}[/]" if description else ""
            self._console.print(f"    {number}) {escape(label)}{more}")

    async def _line(self, prompt: str) -> str:
        self._console.print(prompt, end="")
        line = await self._input.line()
        if line is None:
            self._console.print()
            raise _Ended
        return line
