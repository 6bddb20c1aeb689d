"""The built-in commands' names, known to the early stage (`prestart.command_menu`) as to the agent: the same."""

from __future__ import annotations

from coder_agent.agent.commands.builtin import BUILTINS
from coder_agent.prestart.command_menu import BUILTIN_MENU


def test_the_early_stage_knows_every_built_in_command() -> None:
    assert {command.name for command in BUILTINS} == {name for name, _, _ in BUILTIN_MENU}
