"""The commands of a session: the built-ins, the user's and the project's files, the MCP servers' prompts."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio

from ...acp.schema import AvailableCommand, ContentBlock
from ..errors import InvalidInput
from ..sessions.session import Session
from ..tool_source import SourcePrompt, ToolSource
from .base import Command, Invocation, parse, with_arguments
from .builtin import BUILTINS
from .files import command_files, command_of


@dataclass(frozen=True)
class Resolved:
    command: Command
    invocation: Invocation


def prompt_arguments(prompt: SourcePrompt, text: str) -> dict[str, str]:
    """What the user typed after an MCP prompt's name, as its arguments.

    One argument takes the whole text. Several take words (quotes group words): `name=value` words name their
    argument, the other words fill the arguments not named, in order, the last of them taking what is left
    (`/mcp__docs__summarize README.md style=long` mixes both).
    """
    names = [argument.name for argument in prompt.arguments]
    values: dict[str, str] = {}
    if len(names) == 1 and text:
        values[names[0]] = text.removeprefix(f"{names[0]}=")
    elif names and text:
        try:
            words = shlex.split(text)
        except ValueError as exc:
            raise InvalidInput(f"Invalid params: /{prompt.name}: {exc}") from exc
        positional: list[str] = []
        for word in words:
            name, sep, value = word.partition("=")
            if sep and name in names and name not in values:
                values[name] = value
            else:
                positional.append(word)
        free = [name for name in names if name not in values]
        if positional and not free:
            raise InvalidInput(
                f"Invalid params: /{prompt.name}: every argument is named already, so {' '.join(positional)!r} "
                f"has none to go to (/{prompt.name} {prompt_hint(prompt)})"
            )
        values.update(zip(free, positional, strict=False))
        if len(positional) > len(free):
            values[free[-1]] = " ".join(positional[len(free) - 1 :])
    missing = [argument.name for argument in prompt.arguments if argument.required and not values.get(argument.name)]
    if missing:
        raise InvalidInput(
            f"Invalid params: /{prompt.name} needs {', '.join(missing)}: type them after the command "
            f"(/{prompt.name} {prompt_hint(prompt)})"
        )
    return values


def prompt_hint(prompt: SourcePrompt) -> str:
    return " ".join(f"<{a.name}>" if a.required else f"[{a.name}]" for a in prompt.arguments)


def mcp_command(prompt: SourcePrompt, source: ToolSource) -> Command:
    async def expand(session: Session, arguments: str) -> str:
        text = await source.get_prompt(prompt.name, prompt_arguments(prompt, arguments))
        return with_arguments(text, arguments) if not prompt.arguments else text

    return Command(prompt.name, prompt.description, prompt_hint(prompt) or None, expand=expand)


class Commands:
    """Finds a session's commands afresh each time (files may have changed, MCP servers come up)."""

    def __init__(self, user_folder: Path | None, builtins: Sequence[Command] = BUILTINS) -> None:
        self._user_folder = user_folder
        self._builtins = list(builtins)

    async def of(self, session: Session) -> list[Command]:
        files = await anyio.to_thread.run_sync(command_files, self._user_folder, session.cwd, session.roots)
        names = {command.name for command in self._builtins}
        commands = [*self._builtins, *(command_of(file) for file in files if file.name not in names)]
        source = session.tool_source
        if source is not None:
            commands += [mcp_command(prompt, source) for prompt in source.prompts()]
        return commands

    async def available(self, session: Session) -> list[AvailableCommand]:
        return [command.available() for command in await self.of(session)]

    async def resolve(self, session: Session, blocks: Sequence[ContentBlock]) -> Resolved | None:
        """The command the prompt invokes; None when it invokes none (an unknown `/word` is plain text)."""
        invocation = parse(blocks)
        if invocation is None:
            return None
        command = next((c for c in await self.of(session) if c.name == invocation.name), None)
        return Resolved(command, invocation) if command is not None else None
