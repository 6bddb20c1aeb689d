"""`write_file`: create a file, or replace all of one, with the given content."""

from __future__ import annotations

from pydantic import Field

from ...acp.schema import ToolCallLocation
from ..workspace.files import BinaryFileError
from ..workspace.patching import uses_crlf
from .base import FileChange, Intent, Tool, ToolArgs, ToolContext, ToolError


async def read_current(ctx: ToolContext, path: str) -> str | None:
    """The text an edit starts from (None: the file does not exist); anything that is not a text file is refused."""
    shown = ctx.display(path)
    try:
        return await ctx.files.read_text_or_none(path)
    except IsADirectoryError as exc:
        raise ToolError(f"{shown} is a directory, not a file") from exc
    except BinaryFileError as exc:
        raise ToolError(f"{shown} is a binary file; only text files can be edited") from exc
    except PermissionError as exc:
        raise ToolError(f"permission denied reading {shown}") from exc
    except OSError as exc:
        raise ToolError(f"could not read {shown}: {exc}") from exc


def keep_newlines(old_text: str | None, new_text: str) -> str:
    """Text the model wrote with LF line breaks gets the CRLF breaks of the file it replaces."""
    if old_text is not None and uses_crlf(old_text) and "\r\n" not in new_text:
        return new_text.replace("\n", "\r\n")
    return new_text


def edit_intent(ctx: ToolContext, verb: str, change: FileChange, line: int | None = None) -> Intent:
    """The intent of an edit of one file: its title, where it is, and the diff."""
    return Intent(
        title=f"{verb} {ctx.display(change.path)}",
        kind="edit",
        effect="edit",
        locations=[ToolCallLocation(path=change.path, line=line)],
        content=[change.diff()],
        changes=[change],
    )


class WriteFileArgs(ToolArgs):
    path: str = Field(description="The file to write: absolute, or relative to the working directory.")
    content: str = Field(description="The complete new content of the file.")


class WriteFile(Tool[WriteFileArgs]):
    name = "write_file"
    title = "Write file"
    kind = "edit"
    args_model = WriteFileArgs

    async def prepare(self, args: WriteFileArgs, ctx: ToolContext) -> Intent:
        path = ctx.resolve(args.path)
        old_text = await read_current(ctx, path)
        change = FileChange(path, old_text, keep_newlines(old_text, args.content))
        return edit_intent(ctx, "Create" if old_text is None else "Write", change)
