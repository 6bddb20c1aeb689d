"""`FillIn`: the editor serves what it advertised, this machine the rest; an editor never hears of a local terminal."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest

from coder_agent.acp.schema import ClientCapabilities, TerminalExitStatus, TerminalOutputResponse
from coder_agent.acp.schema.initialize import FileSystemCapabilities
from coder_agent.local.fill_in import FillIn

pytestmark = pytest.mark.anyio
SESSION = "sess-fill"


class Editor:
    """Records every fs/terminal call; advertises what `capabilities` says at the time of the call."""

    def __init__(self, capabilities: ClientCapabilities | None = None) -> None:
        self.capabilities = capabilities or ClientCapabilities()
        self.calls: list[tuple[str, Any]] = []

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None
    ) -> str:
        self.calls.append(("read", path))
        return "from the editor's buffer\n"

    async def write_text_file(self, session_id: str, path: str, content: str) -> None:
        self.calls.append(("write", path))

    async def create_terminal(self, session_id: str, command: str, args: Sequence[str] = (), *rest: Any) -> str:
        self.calls.append(("create", command))
        return "editor-term-1"

    def takes_compaction_updates(self) -> bool:
        return False

    def shows_terminal(self, terminal_id: str) -> bool:
        return True

    async def terminal_output(self, session_id: str, terminal_id: str) -> TerminalOutputResponse:
        self.calls.append(("output", terminal_id))
        return TerminalOutputResponse(output="shown by the editor", truncated=False)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str) -> TerminalExitStatus:
        self.calls.append(("wait", terminal_id))
        return TerminalExitStatus(exit_code=0)

    async def kill_terminal(self, session_id: str, terminal_id: str) -> None:
        self.calls.append(("kill", terminal_id))

    async def release_terminal(self, session_id: str, terminal_id: str) -> None:
        self.calls.append(("release", terminal_id))


EVERYTHING = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True)


async def test_files_go_to_the_editor_only_for_what_it_advertised(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("on disk\n")
    editor = Editor(ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True)))
    async with anyio.create_task_group() as tasks:
        client = FillIn(editor, tasks)  # type: ignore[arg-type]
        assert await client.read_text_file(SESSION, str(path)) == "from the editor's buffer\n"
        await client.write_text_file(SESSION, str(path), "written locally\n")
    assert editor.calls == [("read", str(path))]
    assert path.read_text() == "written locally\n"


async def test_the_capabilities_are_read_at_each_call_as_initialize_sets_them_after_assembly(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("on disk\n")
    editor = Editor()
    async with anyio.create_task_group() as tasks:
        client = FillIn(editor, tasks)  # type: ignore[arg-type]
        assert await client.read_text_file(SESSION, str(path)) == "on disk\n"
        editor.capabilities = EVERYTHING
        assert await client.read_text_file(SESSION, str(path)) == "from the editor's buffer\n"


async def test_an_editor_without_terminals_never_hears_of_the_local_one(tmp_path: Path) -> None:
    editor = Editor(ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True)))
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            client = FillIn(editor, tasks)  # type: ignore[arg-type]
            terminal = await client.create_terminal(SESSION, "/bin/sh", ["-c", "echo local"], cwd=str(tmp_path))
            assert not client.shows_terminal(terminal)
            assert await client.wait_for_terminal_exit(SESSION, terminal) == TerminalExitStatus(exit_code=0)
            assert (await client.terminal_output(SESSION, terminal)).output == "local\n"
            await client.kill_terminal(SESSION, terminal)
            await client.release_terminal(SESSION, terminal)
    assert editor.calls == []


async def test_an_editors_terminal_is_shown_and_stays_the_editors_even_if_the_capabilities_change(
    tmp_path: Path,
) -> None:
    editor = Editor(EVERYTHING)
    async with anyio.create_task_group() as tasks:
        client = FillIn(editor, tasks)  # type: ignore[arg-type]
        terminal = await client.create_terminal(SESSION, "/bin/sh", ["-c", "true"], cwd=str(tmp_path))
        assert client.shows_terminal(terminal)
        editor.capabilities = ClientCapabilities()
        await client.wait_for_terminal_exit(SESSION, terminal)
        assert (await client.terminal_output(SESSION, terminal)).output == "shown by the editor"
        await client.release_terminal(SESSION, terminal)
    assert editor.calls == [
        ("create", "/bin/sh"),
        ("wait", "editor-term-1"),
        ("output", "editor-term-1"),
        ("release", "editor-term-1"),
    ]
