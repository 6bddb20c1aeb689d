"""`read_file`: a page of a text file, numbered like `cat -n`, as the editor sees it (unsaved changes included)."""

from __future__ import annotations

from pydantic import Field

from ...acp.schema import ToolCallLocation
from ..workspace.files import BinaryFileError
from .base import Intent, Tool, ToolArgs, ToolContext, ToolError, ToolResult, text_content

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000


class ReadFileArgs(ToolArgs):
    path: str = Field(description="The file to read: absolute, or relative to the working directory.")
    offset: int | None = Field(
        default=None, ge=1, description="The 1-based line to start from. Omit to start at the first line."
    )
    limit: int | None = Field(
        default=None, ge=1, description=f"How many lines to read. Omit to read up to {DEFAULT_LIMIT} lines."
    )


def _lines(text: str) -> list[str]:
    """Split on line breaks only (not on the form feeds and separators `str.splitlines` also breaks at)."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def _numbered(lines: list[str], first: int) -> str:
    out = []
    for number, line in enumerate(lines, first):
        if len(line) > MAX_LINE_CHARS:
            line = f"{line[:MAX_LINE_CHARS]}… [line truncated: {len(line)} characters]"
        out.append(f"{number:>6}\t{line}")
    return "\n".join(out)


def _range(args: ReadFileArgs) -> str:
    if args.limit is not None:
        start = args.offset or 1
        return f" (lines {start}-{start + args.limit - 1})"
    return f" (from line {args.offset})" if args.offset else ""


class ReadFile(Tool[ReadFileArgs]):
    name = "read_file"
    title = "Read file"
    kind = "read"
    args_model = ReadFileArgs
    read_only = True

    async def prepare(self, args: ReadFileArgs, ctx: ToolContext) -> Intent:
        path = ctx.resolve(args.path)
        return Intent(
            title=f"Read {ctx.display(path)}{_range(args)}",
            kind="read",
            effect="read",
            locations=[ToolCallLocation(path=path, line=args.offset or 1)],
        )

    async def run(self, args: ReadFileArgs, intent: Intent, ctx: ToolContext) -> ToolResult:
        path = ctx.resolve(args.path)
        shown = ctx.display(path)
        first = args.offset or 1
        # With a limit, ask for one line more than that to learn whether more follow. Without one, read to
        # the end (the editor pages nothing then) so the note can say how many lines there are.
        wanted = None if args.limit is None else args.limit + 1
        text = await _read(ctx, path, shown, args.offset, wanted)
        lines = _lines(text)
        limit = args.limit or DEFAULT_LIMIT
        page = lines[:limit]
        if not page:
            total = 0 if first == 1 else len(_lines(await _read(ctx, path, shown, None, None)))
            if total:
                raise ToolError(f"{shown} has {total} lines; offset {first} is past its end")
            return ToolResult(output=f"{shown} is empty.", content=[text_content("Empty file")])
        last = first + len(page) - 1
        output = _numbered(page, first)
        if len(lines) > limit:
            if args.limit is None:
                total = first - 1 + len(lines)
                output += (
                    f"\n\n({shown} has {total} lines; this shows lines {first}-{last}."
                    f" Read on with offset={last + 1}, and a limit if you want fewer lines.)"
                )
            else:
                output += f"\n\n(More lines follow; read on with offset={last + 1}.)"
        summary = f"Read {len(page)} lines" if first == 1 else f"Read lines {first}-{last}"
        return ToolResult(output=output, content=[text_content(summary)])


async def _read(ctx: ToolContext, path: str, shown: str, line: int | None, limit: int | None) -> str:
    try:
        return await ctx.files.read_text(path, line, limit)
    except FileNotFoundError as exc:
        raise ToolError(f"{shown} does not exist") from exc
    except IsADirectoryError as exc:
        raise ToolError(f"{shown} is a directory, not a file; use list_dir to see what it holds") from exc
    except BinaryFileError as exc:
        raise ToolError(f"{shown} is a binary file; read_file reads text files only") from exc
    except PermissionError as exc:
        raise ToolError(f"permission denied reading {shown}") from exc
    except OSError as exc:
        raise ToolError(f"could not read {shown}: {exc}") from exc
