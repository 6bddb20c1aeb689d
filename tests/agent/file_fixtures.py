"""Two editors for the file tools, fakes both: one that offers fs/* (and keeps what it is sent in its buffers), one
that offers nothing, so the agent uses the disk. `conftest.py` makes the fixtures visible to the tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from coder_agent.acp.schema import ClientCapabilities, SessionUpdate, ToolCallContent
from coder_agent.acp.schema.initialize import FileSystemCapabilities
from coder_agent.agent.errors import ClientError
from coder_agent.agent.files import Files
from coder_agent.agent.tools.base import Intent, Tool, ToolContext, ToolResult

SESSION = "sess-1"


class EditorClient:
    """Advertises fs: serves reads from its buffers, else the disk, and keeps writes in its buffers (unsaved)."""

    def __init__(self) -> None:
        self.capabilities = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True))
        self.buffers: dict[str, str] = {}
        self.reads: list[tuple[str, int | None, int | None]] = []
        self.writes: list[tuple[str, str]] = []
        self.updates: list[SessionUpdate] = []

    async def session_update(self, session_id: str, update: SessionUpdate) -> None:
        self.updates.append(update)

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None
    ) -> str:
        assert session_id == SESSION
        self.reads.append((path, line, limit))
        if path in self.buffers:
            text = self.buffers[path]
        else:
            try:
                text = (await anyio.Path(path).read_bytes()).decode("utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise ClientError(str(exc)) from exc
        if line is None and limit is None:
            return text
        lines = text.splitlines(keepends=True)
        start = (line or 1) - 1
        return "".join(lines[start : None if limit is None else start + limit])

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


def make_ctx(client: EditorClient | BareClient, cwd: Path) -> ToolContext:
    emitted: list[SessionUpdate] = []
    progressed: list[list[ToolCallContent]] = []

    async def emit(update: SessionUpdate) -> None:
        emitted.append(update)

    async def progress(content: list[ToolCallContent]) -> None:
        progressed.append(content)

    client_: Any = client
    return ToolContext(
        session_id=SESSION,
        cwd=str(cwd),
        roots=[str(cwd)],
        client=client_,
        files=Files(client_, SESSION),
        emit=emit,
        progress=progress,
    )


async def prepare(tool: Tool[Any], ctx: ToolContext, **arguments: Any) -> Intent:
    return await tool.prepare(tool.parse(arguments), ctx)


async def call(tool: Tool[Any], ctx: ToolContext, **arguments: Any) -> ToolResult:
    """Parse, prepare and run one call, as the turn does once the call is allowed."""
    args = tool.parse(arguments)
    return await tool.run(args, await tool.prepare(args, ctx), ctx)


@pytest.fixture
def editor_client() -> EditorClient:
    return EditorClient()


@pytest.fixture
def bare_client() -> BareClient:
    return BareClient()


@pytest.fixture
def editor_ctx(editor_client: EditorClient, tmp_path: Path) -> ToolContext:
    """A context in tmp_path whose editor offers fs/*."""
    return make_ctx(editor_client, tmp_path)


@pytest.fixture
def bare_ctx(bare_client: BareClient, tmp_path: Path) -> ToolContext:
    """A context in tmp_path whose editor offers nothing: files are read and written on disk."""
    return make_ctx(bare_client, tmp_path)


@pytest.fixture(params=["editor", "bare"])
def any_ctx(request: pytest.FixtureRequest, tmp_path: Path) -> ToolContext:
    """Each test using it runs twice: through the editor, and on the bare disk."""
    client = EditorClient() if request.param == "editor" else BareClient()
    return make_ctx(client, tmp_path)


def written(ctx: ToolContext, path: Path) -> str:
    """The file's text as the agent left it: in the editor's buffer, or on disk."""
    client = ctx.client
    if isinstance(client, EditorClient) and str(path) in client.buffers:
        return client.buffers[str(path)]
    return path.read_bytes().decode("utf-8")
