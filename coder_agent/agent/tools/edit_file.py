"""`edit_file`: replace an exact string in a file; its errors tell the model how to get the match right."""

from __future__ import annotations

import re

from pydantic import Field

from ..workspace.patching import uses_crlf
from .base import FileChange, Intent, Tool, ToolArgs, ToolContext, ToolError
from .write_file import edit_intent, read_current

_SPACE = re.compile(r"\s+")
_SHOWN_MATCH_LINES = 6


class EditFileArgs(ToolArgs):
    path: str = Field(description="The file to edit: absolute, or relative to the working directory.")
    old_string: str = Field(
        description="The exact text to replace, including indentation. Empty: create a new file with new_string."
    )
    new_string: str = Field(description="The text to put in its place.")
    replace_all: bool = Field(
        default=False, description="Replace every occurrence of old_string, not just a single unique one."
    )


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _occurrences(text: str, needle: str) -> list[int]:
    found, at = [], text.find(needle)
    while at != -1:
        found.append(at)
        at = text.find(needle, at + len(needle))
    return found


def _squash(text: str) -> str:
    return _SPACE.sub("", text)


def _loose_match(text: str, needle: str) -> int | None:
    """The 0-based first line of a match of `needle` that differs from it only in whitespace, if there is one."""
    wanted = [_squash(line) for line in needle.strip("\n").split("\n")]
    if not any(wanted):
        return None
    lines = [_squash(line) for line in text.split("\n")]
    for at in range(len(lines) - len(wanted) + 1):
        window = lines[at : at + len(wanted)]
        if len(wanted) == 1:
            if wanted[0] in window[0]:
                return at
        elif window[0].endswith(wanted[0]) and window[-1].startswith(wanted[-1]) and window[1:-1] == wanted[1:-1]:
            return at
    return None


def _not_found(text: str, needle: str, shown: str) -> ToolError:
    message = f"old_string not found in {shown}."
    at = _loose_match(text, needle)
    if at is None:
        return ToolError(f"{message} Read the file again and copy the text to replace exactly.")
    count = min(len(needle.strip("\n").split("\n")), _SHOWN_MATCH_LINES)
    lines = text.split("\n")[at : at + count]
    numbered = "\n".join(f"{number:>6}\t{line}" for number, line in enumerate(lines, at + 1))
    return ToolError(
        f"{message} Text that differs only in whitespace or indentation is at line {at + 1}:\n{numbered}\n"
        "Copy old_string from the file exactly, with its indentation (tabs or spaces) and line breaks."
    )


class EditFile(Tool[EditFileArgs]):
    name = "edit_file"
    title = "Edit file"
    kind = "edit"
    args_model = EditFileArgs

    async def prepare(self, args: EditFileArgs, ctx: ToolContext) -> Intent:
        path = ctx.resolve(args.path)
        shown = ctx.display(path)
        if args.old_string == args.new_string:
            raise ToolError("old_string and new_string are the same; there is nothing to change")
        old_text = await read_current(ctx, path)
        if args.old_string == "":
            if old_text:
                raise ToolError(
                    f"{shown} already exists; give the old_string to replace, or use write_file to replace it all"
                )
            change = FileChange(path, old_text, args.new_string)
            return edit_intent(ctx, "Create" if old_text is None else "Write", change, line=1)
        if old_text is None:
            raise ToolError(f"{shown} does not exist; to create it, give an empty old_string")
        # A CRLF file is matched and edited with LF breaks, the way the model writes, and keeps its CRLF.
        crlf = uses_crlf(old_text)
        text = old_text.replace("\r\n", "\n") if crlf else old_text
        old_string = args.old_string.replace("\r\n", "\n") if crlf else args.old_string
        new_string = args.new_string.replace("\r\n", "\n") if crlf else args.new_string
        found = _occurrences(text, old_string)
        if not found:
            raise _not_found(text, old_string, shown)
        if len(found) > 1 and not args.replace_all:
            lines = ", ".join(str(_line_of(text, at)) for at in found[:10]) + (", …" if len(found) > 10 else "")
            raise ToolError(
                f"old_string occurs {len(found)} times in {shown} (at lines {lines}). Include more of the"
                " surrounding lines to make it unique, or set replace_all to replace every occurrence."
            )
        new_text = text.replace(old_string, new_string)
        if crlf:
            new_text = new_text.replace("\n", "\r\n")
        return edit_intent(ctx, "Edit", FileChange(path, old_text, new_text), line=_line_of(text, found[0]))
