"""The tool seam: what every tool offered to the model is, and what it is given to work with.

A call goes through two steps. `prepare` works out what the call will do without doing it (the title, the
files it touches, the diff an edit would make); the editor is shown that, and the permission gate decides
on it. Only then does `run` act. Edits share one `run`: they only compute `FileChange`s in `prepare`.
"""

from __future__ import annotations

import os
import re
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from ...acp.schema import (
    ContentToolCallContent,
    DiffContent,
    SessionUpdate,
    TextContent,
    ToolCallContent,
    ToolCallLocation,
    ToolKind,
)
from ...kit.prompts import read_prompt
from ..client import Client
from ..diagnostics import Diagnostics, Edit
from ..workspace.files import Files
from .problems import check_edits

Effect = Literal["read", "edit", "execute", "fetch", "none"]
"""What the permission gate decides on: reading is free, editing and executing may ask, `none` never asks;
`fetch` (a web page) asks as a command does, in plan mode too, where it is allowed: it changes nothing here."""


class ToolError(Exception):
    """The call cannot be done as asked; the message goes back to the model (and to the editor)."""


class ToolArgs(BaseModel):
    """Base of every tool's arguments model: its JSON schema is what the model is offered."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class FileChange:
    """One file an edit will write (`new_text`) or delete (`new_text is None`)."""

    path: str  # absolute
    old_text: str | None  # None: the file does not exist yet
    new_text: str | None

    def diff(self) -> DiffContent:
        return DiffContent(path=self.path, old_text=self.old_text, new_text=self.new_text or "")


@dataclass
class Intent:
    """What a call will do, known before it runs."""

    title: str
    kind: ToolKind
    effect: Effect
    locations: list[ToolCallLocation] = field(default_factory=list)
    content: list[ToolCallContent] = field(default_factory=list)  # shown with the call and in the permission prompt
    changes: list[FileChange] = field(default_factory=list)  # for edits
    command: str | None = None  # for shell commands: "always allow" remembers its prefix
    mcp_tool: tuple[str, str] | None = None  # for an MCP server's tool: (server, tool), what rules name
    domain: str | None = None  # for a web page fetched: its host, what "always allow this domain" keeps

    @property
    def written_paths(self) -> list[str]:
        return [change.path for change in self.changes]


@dataclass
class ToolResult:
    output: str  # what the model reads
    content: list[ToolCallContent] = field(default_factory=list)  # what the editor shows when the call ends
    raw_output: Any = None
    failed: bool = False


def text_content(text: str) -> ContentToolCallContent:
    return ContentToolCallContent(content=TextContent(text=text))


def fenced(text: str) -> str:
    """`text` in a Markdown code block whose fence no backtick run inside it can close."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text.rstrip(chr(10))}\n{fence}"


@dataclass
class ToolContext:
    """The narrow set of things a tool may use."""

    session_id: str
    cwd: str
    roots: Sequence[str]
    client: Client
    files: Files
    # Send a session update (a plan, say) to the editor.
    emit: Callable[[SessionUpdate], Awaitable[None]]
    # Replace the running call's content in the editor (e.g. embed a terminal as soon as it exists).
    progress: Callable[[list[ToolCallContent]], Awaitable[None]]
    # About to write `path` (old text -> new text; None: absent): the turn's checkpoint keeps the old first.
    before_write: Callable[[str, str | None, str | None], None] = lambda path, old, new: None
    # The running call's id, as the editor knows it: a question asked during the call is tied to it.
    tool_call_id: str = ""
    # Wrote (or deleted) `path`: the turn's checkpoint reads back what the write left.
    after_write: Callable[[str], Awaitable[None]] | None = None
    # Whether the permission gate lets (tool, intent) run without asking: `fetch` follows a redirect to another
    # host only when the user allowed that host already.
    runs_unasked: Callable[[str, Intent], bool] = lambda tool, intent: False
    # The session's language servers: an edit's result says what problems it introduced.
    diagnostics: Diagnostics | None = None

    def resolve(self, path: str) -> str:
        """An absolute, normalised path; relative paths are taken from the session's cwd."""
        expanded = os.path.expanduser(path)
        return os.path.normpath(expanded if os.path.isabs(expanded) else os.path.join(self.cwd, expanded))

    def display(self, path: str) -> str:
        """A short form of `path` for titles: relative to cwd when inside it."""
        try:
            relative = os.path.relpath(path, self.cwd)
        except ValueError:
            return path
        return path if relative.startswith("..") else relative


A = TypeVar("A", bound=ToolArgs)


class Tool(ABC, Generic[A]):
    name: ClassVar[str]
    args_model: type[A]
    read_only: ClassVar[bool] = False  # read-only calls of one model response may run concurrently
    # How a call is shown before it could be prepared (invalid arguments, say); `prepare` says it better.
    title: str = "Tool call"
    kind: ToolKind = "other"

    @cached_property
    def description(self) -> str:
        return read_prompt(f"tools/{self.name}.md")

    def spec(self) -> dict[str, Any]:
        """The function definition offered to the model (OpenAI format; litellm converts it)."""
        schema = self.args_model.model_json_schema()
        schema.pop("title", None)
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": schema},
        }

    def parse(self, arguments: dict[str, Any]) -> A:
        return self.args_model.model_validate(arguments)

    @abstractmethod
    async def prepare(self, args: A, ctx: ToolContext) -> Intent: ...

    async def run(self, args: A, intent: Intent, ctx: ToolContext) -> ToolResult:
        """The default run applies the intent's file changes; tools that do something else override it."""
        return await apply_changes(intent.changes, ctx)


async def apply_changes(changes: Sequence[FileChange], ctx: ToolContext) -> ToolResult:
    """Write (or delete) each changed file; all or nothing if any changed since the call was prepared."""
    for change in changes:
        if await ctx.files.read_text_or_none(change.path) != change.old_text:
            raise ToolError(
                f"{ctx.display(change.path)} changed since this edit was prepared; nothing was written. "
                "Read it again and redo the edit."
            )
    done: list[str] = []
    for change in changes:
        ctx.before_write(change.path, change.old_text, change.new_text)
        if change.new_text is None:
            await ctx.files.delete(change.path)
            done.append(f"deleted {ctx.display(change.path)}")
        else:
            await ctx.files.write_text(change.path, change.new_text)
            verb = "created" if change.old_text is None else "updated"
            done.append(f"{verb} {ctx.display(change.path)}")
        if ctx.after_write is not None:
            await ctx.after_write(change.path)
    output = "; ".join(done) or "no changes"
    content: list[ToolCallContent] = [change.diff() for change in changes]
    # The server is given the text written here (not read back: the editor may hold it in a buffer).
    edits = [Edit(change.path, change.old_text, change.new_text) for change in changes]
    checked = await check_edits(ctx.diagnostics, edits, ctx.display)
    if checked is not None:
        output = f"{output}\n{checked}"
        content.append(text_content(checked))
    return ToolResult(output=output, content=content)
