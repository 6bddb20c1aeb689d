"""Slash commands as text: how a prompt names one and what `/init` asks. Stdlib only: the runtime's commands
(`agent.commands`) and the early first call (`prestart.early_prompt`, which expands a first prompt that is a
command as the turn would) read a prompt alike. The command files themselves are read by
`prestart.command_menu`, for the early menu, the early first call and the runtime alike.
"""

from __future__ import annotations

import re

from .prompts import render

INVOCATION = re.compile(r"/([A-Za-z0-9_][A-Za-z0-9_.:-]*)(?:\s+(.*))?", re.DOTALL)


def invocation(text: str) -> tuple[str, str] | None:
    """(name, arguments) of `/name arguments`, the whole of a prompt's first text; None when it is not that."""
    match = INVOCATION.fullmatch(text.strip())
    return None if match is None else (match.group(1), (match.group(2) or "").strip())


def with_arguments(template: str, arguments: str) -> str:
    """A command's text with `$ARGUMENTS` replaced; without the placeholder, the arguments follow the text."""
    if "$ARGUMENTS" in template:
        return template.replace("$ARGUMENTS", arguments)
    return f"{template.rstrip()}\n\n{arguments}" if arguments else template


def init_text(arguments: str) -> str:
    """What `/init` asks of the model."""
    return render("commands/init.md", instructions=extra(arguments))


def extra(arguments: str) -> str:
    return f"\nThe user adds: {arguments}" if arguments else ""
