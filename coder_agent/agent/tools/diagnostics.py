"""`diagnostics`: the current problems (errors, warnings) a language server finds in a file, a folder or the project.

A file is read as `read_file` reads it (the editor's unsaved buffer wins); a folder's files in the languages a
server checks are listed as `grep` lists them, and read from the disk. Read-only: plan mode may use it.
"""

from __future__ import annotations

import os

import anyio
from pydantic import Field

from ...acp.schema import ToolCallLocation
from ...kit.untrusted import read_capped
from ..diagnostics import Diagnostics
from ..workspace.files import looks_binary
from ..workspace.listing import list_files
from .base import Intent, Tool, ToolArgs, ToolContext, ToolError, ToolResult
from .problems import problem_report_text
from .write_file import read_current

FILE_WAIT = 10.0  # a server's first answer includes its start: seconds on a busy machine
FOLDER_WAIT = 20.0
MAX_FILES = 300  # of a folder: more is what a build's own checker is for
MAX_FILE_BYTES = 1024 * 1024


class DiagnosticsArgs(ToolArgs):
    path: str | None = Field(
        default=None, description="A file or a folder (its files, recursively). Default: the whole project."
    )


def _read(path: str, roots: list[str]) -> str | None:
    try:
        capped = read_capped(path, MAX_FILE_BYTES, roots)
    except OSError:
        return None
    if capped.size > MAX_FILE_BYTES or looks_binary(capped.data):
        return None
    return capped.data.decode("utf-8", "replace")


async def _folder_files(diagnostics: Diagnostics, folder: str, roots: list[str]) -> tuple[list[tuple[str, str]], int]:
    """The folder's files a server checks, read (at most `MAX_FILES`), and how many there were in all."""
    listing = await list_files(folder)
    paths = [path for name in listing.files if diagnostics.handles(path := os.path.join(folder, name))]
    files = []
    for path in paths[:MAX_FILES]:
        text = await anyio.to_thread.run_sync(_read, path, roots)
        if text is not None:
            files.append((path, text))
    return files, len(paths)


class DiagnosticsTool(Tool[DiagnosticsArgs]):
    name = "diagnostics"
    title = "Diagnostics"
    kind = "read"
    args_model = DiagnosticsArgs
    read_only = True

    async def prepare(self, args: DiagnosticsArgs, ctx: ToolContext) -> Intent:
        if args.path is None:
            return Intent(title="Diagnostics of the project", kind="read", effect="read")
        path = ctx.resolve(args.path)
        return Intent(
            title=f"Diagnostics of {ctx.display(path)}",
            kind="read",
            effect="read",
            locations=[ToolCallLocation(path=path)],
        )

    async def run(self, args: DiagnosticsArgs, intent: Intent, ctx: ToolContext) -> ToolResult:
        diagnostics = ctx.diagnostics
        if diagnostics is None:
            raise ToolError("language servers are off in this session (the language_servers setting)")
        target = ctx.resolve(args.path) if args.path else ctx.cwd
        if await anyio.Path(target).is_dir():
            files, found = await _folder_files(diagnostics, target, list(ctx.roots))
            wait = FOLDER_WAIT
        else:
            if not diagnostics.handles(target):
                raise ToolError(f"no language server checks {ctx.display(target)}{_why_not(diagnostics)}")
            text = await read_current(ctx, target)
            if text is None:
                raise ToolError(f"{args.path} does not exist")
            files, found = [(target, text)], 1
            wait = FILE_WAIT
        if not files:
            return ToolResult(output=f"No files here that a language server checks{_why_not(diagnostics)}")
        reports = await diagnostics.problems(files, wait)
        parts = [text for report in reports if (text := problem_report_text(report, ctx.display))]
        if found > len(files):
            parts.append(f"(only {len(files)} of the {found} files were checked: ask about a folder or a file)")
        if not reports:
            parts.append(f"No language server could check these files{_why_not(diagnostics)}")
        return ToolResult(output="\n".join(parts))


def _why_not(diagnostics: Diagnostics) -> str:
    missing = diagnostics.missing()
    return f" ({'; '.join(missing)})." if missing else "."
