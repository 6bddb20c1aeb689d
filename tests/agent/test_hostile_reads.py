"""The files the agent reads on its own from a hostile checkout: instruction files, command files, .gitignore.

The cases are those of `tests/fixtures/hostile_checkout/`. The ones that would take the machine's memory or
block for ever if mishandled run in a bounded interpreter (`run_bounded`), so that a regression fails the test
and nothing else.
"""

from __future__ import annotations

import datetime
import json
import logging
import subprocess
from pathlib import Path
from typing import Any

import pytest

from coder_agent.agent.workspace.environment import system_prompt
from coder_agent.prestart.project_facts import MAX_INSTRUCTIONS_CHARS, system_prompt_now
from tests.support.hostile_checkout import SECRET, lay_out, run_bounded

pytestmark = pytest.mark.anyio

TODAY = datetime.date(2024, 2, 29)

SYSTEM_PROMPT_BOTH_WAYS = """
import asyncio, datetime, json, sys
from coder_agent.agent.workspace.environment import system_prompt
from coder_agent.prestart.project_facts import system_prompt_now
today = datetime.date(2024, 2, 29)
now = system_prompt_now(sys.argv[1], [], today=today)
later = asyncio.run(system_prompt(sys.argv[1], [], today=today))
print(json.dumps({"prompt": now, "same": now == later}))
"""

COMMANDS = """
import json, sys
from pathlib import Path
from coder_agent.agent.commands.files import command_files
home, project = Path(sys.argv[1]), sys.argv[2]
found = command_files(home / ".config" / "coder-agent" / "commands", project, [project])
print(json.dumps({f"{c.origin}/{c.name}": [c.description, c.body] for c in found}))
"""

WALK = """
import json, sys
from coder_agent.agent.workspace.ignore import walk
notes = []
files, capped = walk(sys.argv[1], notes=notes)
print(json.dumps({"files": files, "notes": notes}))
"""


def bounded(code: str, *args: str) -> Any:
    """What `code` printed, run in a bounded interpreter; a case it mishandles fails here, not the machine."""
    try:
        done = run_bounded(code, args, timeout=60)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"still blocked after {exc.timeout} s") from None
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.mark.parametrize(
    ("case", "why"),
    [
        ("instructions-zero", "it leads outside the project's folders (/dev/zero)"),
        ("instructions-fifo", "it is a pipe, not a regular file"),
    ],
)
def test_an_instruction_file_that_is_no_regular_file_in_the_project_is_not_read_and_the_prompt_says_so(
    tmp_path: Path, case: str, why: str
) -> None:
    checkout = lay_out([case], tmp_path / "project", tmp_path / "home")
    found = bounded(SYSTEM_PROMPT_BOTH_WAYS, str(checkout.project))
    agents = checkout.project / "AGENTS.md"
    assert found["same"]
    assert f'<project-instructions file="{agents}">\n[AGENTS.md was not read: {why}]\n' in found["prompt"]


def test_a_huge_instruction_file_gives_its_first_characters_and_says_how_much_that_is(tmp_path: Path) -> None:
    checkout = lay_out(["instructions-huge"], tmp_path / "project", tmp_path / "home")
    found = bounded(SYSTEM_PROMPT_BOTH_WAYS, str(checkout.project))
    assert found["same"]
    text = found["prompt"].split(f'<project-instructions file="{checkout.project / "AGENTS.md"}">\n', 1)[1]
    text = text.split("\n</project-instructions>", 1)[0]
    assert text.startswith("# A huge file\n")
    note = (
        f"[AGENTS.md is cut here: only its first {MAX_INSTRUCTIONS_CHARS:,} characters of 3,000,000,000 bytes "
        "were read]"
    )
    assert text.endswith("\n" + note)
    assert len(text) == MAX_INSTRUCTIONS_CHARS + 1 + len(note)


async def test_an_instruction_file_linked_to_a_secret_outside_the_project_is_not_read(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    checkout = lay_out(["instructions-credentials"], tmp_path / "project", tmp_path / "home")
    (checkout.project / "AGENTS.md").write_text("Be brief.\n")
    cwd = str(checkout.project)
    with caplog.at_level(logging.WARNING):
        now = system_prompt_now(cwd, [], today=TODAY)
        assert await system_prompt(cwd, [], today=TODAY) == now
    assert SECRET not in now
    agents, claude = checkout.project / "AGENTS.md", checkout.project / "CLAUDE.md"
    assert f'<project-instructions file="{agents}">\nBe brief.\n</project-instructions>' in now
    why = f"it leads outside the project's folders ({checkout.credentials})"
    assert f'<project-instructions file="{claude}">\n[CLAUDE.md was not read: {why}]\n</project-instructions>' in now
    assert any(str(claude) in record.getMessage() and "not read" in record.getMessage() for record in caplog.records)


async def test_a_link_to_a_file_in_another_root_of_the_session_is_read(tmp_path: Path) -> None:
    project, other = tmp_path / "project", tmp_path / "other"
    project.mkdir()
    other.mkdir()
    (other / "shared.md").write_text("Shared rules.\n")
    (project / "AGENTS.md").symlink_to(other / "shared.md")
    now = system_prompt_now(str(project), [str(other)], today=TODAY)
    assert await system_prompt(str(project), [str(other)], today=TODAY) == now
    assert "Shared rules." in now
    assert "Shared rules." not in system_prompt_now(str(project), [], today=TODAY)


@pytest.mark.parametrize(("case", "key"), [("command-huge", "project/big"), ("user-command-huge", "user/big")])
def test_a_huge_command_file_is_never_read_whole_and_the_menu_says_why(tmp_path: Path, case: str, key: str) -> None:
    checkout = lay_out([case], tmp_path / "project", tmp_path / "home")
    found = bounded(COMMANDS, str(checkout.home), str(checkout.project))
    origin = key.split("/")[0]
    assert found == {key: [f"not read: it is larger than 64 KiB (3,000,000,000 bytes) ({origin})", ""]}


@pytest.mark.parametrize("case", ["gitignore-zero", "gitignore-fifo"])
def test_a_gitignore_that_is_no_regular_file_is_skipped_and_said(tmp_path: Path, case: str) -> None:
    checkout = lay_out([case], tmp_path / "project", tmp_path / "home")
    (checkout.project / "a.txt").write_text("a")
    (checkout.project / "sub").mkdir(exist_ok=True)
    (checkout.project / "sub" / "b.txt").write_text("b")
    found = bounded(WALK, str(checkout.project))
    assert found["files"] == ["a.txt", "sub/b.txt"]
    [note] = found["notes"]
    gitignore = ".gitignore" if case == "gitignore-zero" else "sub/.gitignore"
    assert note.startswith(f"{gitignore} was not read: ") and note.endswith(("(/dev/zero)", "not a regular file"))
