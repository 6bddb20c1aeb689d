"""The permission gate: modes, remembered answers, the project's roots."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from coder_agent.agent.permissions.gate import PermissionRules, command_prefix, decide, permission_options
from coder_agent.agent.tools.base import FileChange, Intent


def edit(path: str) -> Intent:
    return Intent(title="Edit", kind="edit", effect="edit", changes=[FileChange(path, "a", "b")])


def command(text: str) -> Intent:
    return Intent(title=text, kind="execute", effect="execute", command=text)


READ = Intent(title="Read", kind="read", effect="read")


@pytest.mark.parametrize(
    ("mode", "read", "edit_inside", "run"),
    [
        ("ask", "allow", "ask", "ask"),
        ("default", "allow", "ask", "ask"),
        ("accept-edits", "allow", "allow", "ask"),
        ("plan", "allow", "deny", "deny"),
        ("bypass", "allow", "allow", "allow"),
    ],
)
def test_each_mode_decides_reads_edits_and_commands(
    tmp_path: Path, mode: str, read: str, edit_inside: str, run: str
) -> None:
    roots = [str(tmp_path)]
    rules = PermissionRules()
    assert decide(mode, "read_file", READ, rules, roots).action == read
    assert decide(mode, "edit_file", edit(str(tmp_path / "a.py")), rules, roots).action == edit_inside
    assert decide(mode, "run_command", command("npm test"), rules, roots).action == run


@pytest.mark.parametrize(
    ("mode", "action"),
    [("ask", "ask"), ("default", "ask"), ("accept-edits", "ask"), ("plan", "deny"), ("bypass", "allow")],
)
def test_a_write_outside_the_roots_asks_in_every_mode_but_bypass_and_plan_refuses_it(
    tmp_path: Path, mode: str, action: str
) -> None:
    rules = PermissionRules()
    rules.remember("edit_file", edit("/elsewhere"), allowed=True)
    outside = str(tmp_path.parent / "outside.txt")
    assert decide(mode, "edit_file", edit(outside), rules, [str(tmp_path)]).action == action


def test_a_symlink_inside_the_roots_that_points_outside_counts_as_outside(tmp_path: Path) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    os.symlink(elsewhere, project / "link")
    decision = decide(
        "accept-edits", "write_file", edit(str(project / "link" / "x.txt")), PermissionRules(), [str(project)]
    )
    assert decision.action == "ask"
    assert "outside" in decision.reason


@pytest.mark.parametrize(
    ("mode", "action"),
    [("ask", "ask"), ("default", "ask"), ("accept-edits", "ask"), ("plan", "deny"), ("bypass", "allow")],
)
def test_a_write_in_the_git_folder_asks_as_one_outside_the_roots_does(tmp_path: Path, mode: str, action: str) -> None:
    """git runs what its folder holds (hooks, config): remembered answers and accept-edits do not cover it."""
    rules = PermissionRules()
    rules.remember("write_file", edit(str(tmp_path / "a")), allowed=True)
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    decision = decide(mode, "write_file", edit(str(tmp_path / ".git" / "hooks" / "pre-commit")), rules, [str(tmp_path)])
    assert decision.action == action
    if action == "ask":
        assert decision.reason.startswith("writes in a git folder, whose hooks and config git runs: ")


def test_every_way_into_a_git_folder_asks_and_nothing_else_does(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".git" / "hooks").mkdir(parents=True)
    os.symlink(project / ".git" / "hooks", project / "tools")
    linked = project / "linked"  # a linked work tree or a submodule: a `.git` file names its git folder
    (linked / "meta").mkdir(parents=True)
    (linked / ".git").write_text("gitdir: meta\n")
    roots = [str(project)]

    def action(path: Path) -> str:
        return decide("accept-edits", "write_file", edit(str(path)), PermissionRules(), roots).action

    assert action(project / ".git" / "config") == "ask"
    assert action(project / ".GIT" / "config") == "ask"  # the same folder on a case-insensitive disk
    assert action(project / "tools" / "pre-push") == "ask"  # through a link
    assert action(project / "sub" / ".git") == "ask"  # a `.git` file made in a folder: another repository
    assert action(linked / "meta" / "config") == "ask"  # the git folder a `.git` file names
    linked_roots = [str(linked)]
    assert (
        decide("accept-edits", "w", edit(str(linked / "meta" / "x")), PermissionRules(), linked_roots).action == "ask"
    )
    for fine in (".gitignore", ".gitattributes", ".github/workflows/ci.yml", "src/git.py", "linked/metadata.txt"):
        assert action(project / fine) == "allow", fine


def test_the_git_folder_the_agents_environment_names_is_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "repo.git").mkdir()
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "repo.git"))
    roots = [str(tmp_path)]
    assert decide(
        "accept-edits", "w", edit(str(tmp_path / "repo.git" / "config")), PermissionRules(), roots
    ).action == ("ask")
    assert decide("accept-edits", "w", edit(str(tmp_path / "repo.txt")), PermissionRules(), roots).action == "allow"


def test_additional_directories_are_roots_too(tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    roots = [str(tmp_path / "project"), str(extra)]
    assert decide("accept-edits", "write_file", edit(str(extra / "x")), PermissionRules(), roots).action == "allow"


def test_always_allow_is_remembered_for_file_edits_whichever_tool_makes_them(tmp_path: Path) -> None:
    """The option says "file edits": the user does not know write_file and edit_file are different tools."""
    rules, roots = PermissionRules(), [str(tmp_path)]
    rules.remember("edit_file", edit(str(tmp_path / "a")), allowed=True)
    assert decide("default", "edit_file", edit(str(tmp_path / "b")), rules, roots).action == "allow"
    assert decide("default", "write_file", edit(str(tmp_path / "b")), rules, roots).action == "allow"
    assert decide("default", "run_command", command("make"), rules, roots).action == "ask"
    assert decide("ask", "edit_file", edit(str(tmp_path / "b")), rules, roots).action == "ask"


def test_always_allow_is_remembered_per_command_prefix(tmp_path: Path) -> None:
    rules, roots = PermissionRules(), [str(tmp_path)]
    rules.remember("run_command", command("npm test -- --watch"), allowed=True)
    assert decide("default", "run_command", command("npm test"), rules, roots).action == "allow"
    assert decide("default", "run_command", command("npm install left-pad"), rules, roots).action == "ask"
    assert decide("default", "run_command", command("npm test; rm -rf /"), rules, roots).action == "ask"


def test_always_reject_refuses_without_asking(tmp_path: Path) -> None:
    rules, roots = PermissionRules(), [str(tmp_path)]
    rules.remember("run_command", command("git push origin main"), allowed=False)
    decision = decide("default", "run_command", command("git push --force"), rules, roots)
    assert decision.action == "deny"


def test_chained_commands_are_remembered_only_exactly(tmp_path: Path) -> None:
    rules, roots = PermissionRules(), [str(tmp_path)]
    rules.remember("run_command", command("make && make test"), allowed=True)
    assert decide("default", "run_command", command("make && make test"), rules, roots).action == "allow"
    assert decide("default", "run_command", command("make && make install"), rules, roots).action == "ask"


@pytest.mark.parametrize(
    ("text", "prefix"),
    [
        ("npm test", ("npm", "test")),
        ("git status --short", ("git", "status")),
        ("pytest -x tests", ("pytest",)),
        ("python -m pytest", ("python",)),
        ("ls", ("ls",)),
        ("cat a | grep b", None),
        ("echo $(whoami)", None),
        ("echo 'unclosed", None),
    ],
)
def test_command_prefix(text: str, prefix: tuple[str, ...] | None) -> None:
    assert command_prefix(text) == prefix


def test_three_options_are_offered_and_always_names_what_it_covers() -> None:
    options = permission_options("run_command", command("npm test"))
    assert [o.kind for o in options] == ["allow_once", "allow_always", "reject_once"]
    assert options[1].name == "Always allow `npm test` commands in this session"
    lasting = permission_options("run_command", command("npm test"), lasting=True)
    assert [(o.option_id, o.name) for o in lasting][1] == (
        "allow_always_project",
        "Always allow `npm test` commands in this project",
    )
