"""`list_dir`: a folder as an indented tree, skipping what the ignore files hide (see `workspace/listing.py`).

The tree is built from the files a search would see, so a folder with no such file (an empty one, or one
that only holds ignored files) is not shown. Folders come first, each marked with `/`; a folder at the depth
limit shows how many files it holds instead of its contents.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import anyio
from pydantic import Field

from ..workspace.listing import list_files
from ..workspace.ripgrep import RgOptions
from .base import Intent, Tool, ToolArgs, ToolContext, ToolError, ToolResult, fenced, text_content

MAX_ENTRIES = 400
INDENT = "  "


class ListDirArgs(ToolArgs):
    path: str | None = Field(default=None, description="Folder to list (default: the working directory)")
    depth: int = Field(default=2, ge=1, le=10, description="How many levels of folders to open")


@dataclass
class _Folder:
    folders: dict[str, _Folder] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    count: int = 0  # files at any depth below

    def add(self, parts: list[str]) -> None:
        self.count += 1
        if len(parts) == 1:
            self.files.append(parts[0])
        else:
            self.folders.setdefault(parts[0], _Folder()).add(parts[1:])


def tree(files: list[str], depth: int, max_entries: int = MAX_ENTRIES) -> tuple[list[str], bool]:
    """The indented lines for `files` ("/"-separated relative paths), and whether they were cut."""
    top = _Folder()
    for name in files:
        top.add(name.split("/"))
    lines: list[str] = []

    def render(folder: _Folder, level: int) -> bool:
        pad = INDENT * level
        for name in sorted(folder.folders):
            child = folder.folders[name]
            if len(lines) >= max_entries:
                return False
            if level + 1 >= depth:
                lines.append(f"{pad}{name}/ ({child.count} file{'s' if child.count != 1 else ''})")
            else:
                lines.append(f"{pad}{name}/")
                if not render(child, level + 1):
                    return False
        for name in sorted(folder.files):
            if len(lines) >= max_entries:
                return False
            lines.append(pad + name)
        return True

    complete = render(top, 0)
    return lines, not complete


class ListDir(Tool[ListDirArgs]):
    name = "list_dir"
    title = "List folder"
    kind = "read"
    args_model = ListDirArgs
    read_only = True

    def __init__(self, max_entries: int = MAX_ENTRIES, rg: RgOptions | None = None) -> None:
        self.max_entries = max_entries
        self.rg = rg or RgOptions()

    async def prepare(self, args: ListDirArgs, ctx: ToolContext) -> Intent:
        return Intent(title=f"List {ctx.display(ctx.resolve(args.path or '.'))}", kind="read", effect="read")

    async def run(self, args: ListDirArgs, intent: Intent, ctx: ToolContext) -> ToolResult:
        root = ctx.resolve(args.path or ".")
        target = anyio.Path(root)
        if not await target.exists():
            raise ToolError(f"{args.path} does not exist")
        if not await target.is_dir():
            raise ToolError(f"{args.path} is a file, not a folder: use read_file")
        listing = await list_files(root, options=self.rg)
        lines, cut = tree(listing.files, args.depth, self.max_entries)
        body = "\n".join(INDENT + line for line in lines) if lines else f"{INDENT}(no files)"
        output = f"{root.rstrip('/')}/\n{body}"
        if cut:
            output += f"\n(cut at {self.max_entries} entries: list a subfolder, or use a smaller depth)"
        output += "".join(f"\n({note})" for note in listing.notes)
        if listing.capped:
            output += f"\n(only the first {len(listing.files)} files were looked at)"
        return ToolResult(output=output, content=[text_content(fenced(output))])
