"""A tool's context as the turn builds it: the fake editor behind `local.FillIn`, which serves what it does not."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio.abc

from coder_agent.acp.schema import SessionUpdate, ToolCallContent
from coder_agent.agent.tools.base import Tool, ToolContext, ToolResult
from coder_agent.agent.workspace.files import Files
from coder_agent.local.fill_in import FillIn


@dataclass
class FakeContext(ToolContext):
    editor: Any = None  # the fake editor behind `client` (a FillIn), for the test to look at


def make_context(
    editor: Any,
    session_id: str,
    cwd: Path,
    tasks: anyio.abc.TaskGroup,
    emit: Callable[[SessionUpdate], Awaitable[None]],
    progress: Callable[[list[ToolCallContent]], Awaitable[None]],
) -> FakeContext:
    client = FillIn(editor, tasks)
    files = Files(client, session_id)
    return FakeContext(session_id, str(cwd), [str(cwd)], client, files, emit, progress, editor=editor)


async def call(tool: Tool[Any], ctx: ToolContext, **arguments: Any) -> ToolResult:
    """Parse, prepare and run one call, as the turn does once the call is allowed."""
    args = tool.parse(arguments)
    return await tool.run(args, await tool.prepare(args, ctx), ctx)
