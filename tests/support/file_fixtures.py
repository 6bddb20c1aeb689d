"""Two editors for the file tools: one that offers fs/* (and keeps what it is sent in its buffers, unsaved), one
that offers nothing, so the local disk serves the agent (`local.FillIn`). `conftest.py` makes the fixtures
visible to the tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest

from coder_agent.acp.schema import ClientCapabilities, SessionUpdate, ToolCallContent
from coder_agent.acp.schema.initialize import FileSystemCapabilities
from coder_agent.agent.errors import ClientError
from coder_agent.agent.tools.base import Intent, Tool, ToolContext
from coder_agent.local.files import LocalFiles, page

from .contexts import FakeContext, call, make_context

SESSION = "sess-1"
__all__ = ["call"]


class EditorClient:
    """Advertises fs: serves reads from its buffers, else the disk, and keeps writes in its buffers (unsaved)."""

    def __init__(self) -> None:
        self.capabilities = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True))
        self.buffers: dict[str, str] = {}
        self.reads: list[tuple[str, int | None, int | None]] = []
        self.writes: list[tuple[str, str]] = []
        self.updates: list[SessionUpdate] = []
        self._disk = LocalFiles()

    async def session_update(self, session_id: str, update: SessionUpdate) -> None:
        self.updates.append(update)

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None
    ) -> str:
        assert session_id == SESSION
        self.reads.append((path, line, limit))
        if path in self.buffers:
            return page(self.buffers[path], line, limit)
        try:
            return await self._disk.read_text_file(session_id, path, line, limit)
        except OSError as exc:  # an editor answers with an error
            raise ClientError(str(exc)) from exc

    async def write_text_file(self, session_id: str, path: str, content: str) -> None:
        assert session_id == SESSION
        self.writes.append((path, content))
        self.buffers[path] = content


class BareClient:
    """Advertises nothing: the agent must not call its fs methods."""

    def __init__(self) -> None:
        self.capabilities = ClientCapabilities()
        self.updates: list[SessionUpdate] = []

    async def session_update(self, session_id: str, update: SessionUpdate) -> None:
        self.updates.append(update)

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None
    ) -> str:
        raise AssertionError("fs/read_text_file was not advertised")

    async def write_text_file(self, session_id: str, path: str, content: str) -> None:
        raise AssertionError("fs/write_text_file was not advertised")


def make_ctx(client: EditorClient | BareClient, cwd: Path, tasks: anyio.abc.TaskGroup) -> FakeContext:
    emitted: list[SessionUpdate] = []
    progressed: list[list[ToolCallContent]] = []

    async def emit(update: SessionUpdate) -> None:
        emitted.append(update)

    async def progress(content: list[ToolCallContent]) -> None:
        progressed.append(content)

    return make_context(client, SESSION, cwd, tasks, emit, progress)


async def prepare(tool: Tool[Any], ctx: ToolContext, **arguments: Any) -> Intent:
    return await tool.prepare(tool.parse(arguments), ctx)


@pytest.fixture
async def tasks() -> AsyncIterator[anyio.abc.TaskGroup]:
    """A task group for the local terminals (the assembly's `background`), open for the test."""
    async with anyio.create_task_group() as group:
        yield group
        group.cancel_scope.cancel()


@pytest.fixture
def editor_client() -> EditorClient:
    return EditorClient()


@pytest.fixture
def bare_client() -> BareClient:
    return BareClient()


@pytest.fixture
def editor_ctx(editor_client: EditorClient, tmp_path: Path, tasks: anyio.abc.TaskGroup) -> FakeContext:
    """A context in tmp_path whose editor offers fs/*."""
    return make_ctx(editor_client, tmp_path, tasks)


@pytest.fixture
def bare_ctx(bare_client: BareClient, tmp_path: Path, tasks: anyio.abc.TaskGroup) -> FakeContext:
    """A context in tmp_path whose editor offers nothing: files are read and written on disk."""
    return make_ctx(bare_client, tmp_path, tasks)


@pytest.fixture(params=["editor", "bare"])
def any_ctx(request: pytest.FixtureRequest, tmp_path: Path, tasks: anyio.abc.TaskGroup) -> FakeContext:
    """Each test using it runs twice: through the editor, and on the bare disk."""
    client = EditorClient() if request.param == "editor" else BareClient()
    return make_ctx(client, tmp_path, tasks)


def written(ctx: FakeContext, path: Path) -> str:
    """The file's text as the agent left it: in the editor's buffer, or on disk."""
    editor = ctx.editor
    if isinstance(editor, EditorClient) and str(path) in editor.buffers:
        return editor.buffers[str(path)]
    return path.read_bytes().decode("utf-8")
