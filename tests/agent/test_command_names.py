"""The built-in commands' names, known to the early stage (`kit.commands`) as to the agent: the same."""

from __future__ import annotations

from coder_agent.agent.commands.builtin import BUILTINS
from coder_agent.kit.commands import BUILTIN_NAMES


def test_the_early_stage_knows_every_built_in_command() -> None:
    assert {command.name for command in BUILTINS} == set(BUILTIN_NAMES)
