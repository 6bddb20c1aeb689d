"""Public tool names: `mcp__<server>__<tool>`, valid for every provider, unique and stable."""

from __future__ import annotations

import re

from coder_agent.mcp.names import ToolNames, sanitise

VALID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def test_names_are_namespaced_and_invalid_characters_replaced() -> None:
    assert sanitise("demo", "add") == "mcp__demo__add"
    assert sanitise("my server", "files.read/all") == "mcp__my_server__files_read_all"
    assert sanitise("ünï", "tool-1") == "mcp___n___tool-1"


def test_long_names_are_cut_to_64_with_a_hash_that_keeps_them_apart() -> None:
    first = sanitise("server", "a" * 100 + "1")
    second = sanitise("server", "a" * 100 + "2")
    assert len(first) == len(second) == 64
    assert VALID.match(first) and VALID.match(second)
    assert first != second
    assert first.startswith("mcp__server__aaaa")


def test_clashing_names_get_numbered_and_each_tool_keeps_its_name() -> None:
    names = ToolNames()
    assert names.name(0, "a.b", "x") == "mcp__a_b__x"
    assert names.name(1, "a_b", "x") == "mcp__a_b__x_2"
    assert names.name(2, "a b", "x") == "mcp__a_b__x_3"
    assert names.name(0, "a.b", "x") == "mcp__a_b__x"
    assert names.name(1, "a_b", "x") == "mcp__a_b__x_2"


def test_clashing_long_names_stay_valid() -> None:
    names = ToolNames()
    first = names.name(0, "s", "t" * 100)
    second = names.name(1, "s", "t" * 100)
    assert first != second
    assert VALID.match(first) and VALID.match(second)
