"""`apply_patch`: a unified diff over one or more files, applied all or nothing (the logic is in `patching`)."""

from __future__ import annotations

from pydantic import Field

from ...acp.schema import ToolCallLocation
from ..workspace.patching import FileResult, PatchError, apply_patch, parse_patch
from .base import FileChange, Intent, Tool, ToolArgs, ToolContext, ToolError
from .write_file import read_current


class ApplyPatchArgs(ToolArgs):
    patch: str = Field(
        description=(
            "A unified diff: for each file a `--- path` and a `+++ path` line (`/dev/null` to create or delete),"
            " then `@@` hunks whose context and `-` lines match the file exactly."
        )
    )


def _title(ctx: ToolContext, results: list[FileResult], changes: list[FileChange]) -> str:
    if len(results) == 1:
        change = changes[0]
        verb = "Delete" if change.new_text is None else "Create" if change.old_text is None else "Patch"
        return f"{verb} {ctx.display(change.path)}"
    return f"Patch {len(results)} files"


class ApplyPatch(Tool[ApplyPatchArgs]):
    name = "apply_patch"
    title = "Apply patch"
    kind = "edit"
    args_model = ApplyPatchArgs

    async def prepare(self, args: ApplyPatchArgs, ctx: ToolContext) -> Intent:
        try:
            patches = parse_patch(args.patch)
        except PatchError as exc:
            raise ToolError(f"The patch was not applied: {exc}") from exc
        paths = list(dict.fromkeys(path for patch in patches for path in patch.paths))
        files = {path: await read_current(ctx, ctx.resolve(path)) for path in paths}
        try:
            results = apply_patch(patches, files)
        except PatchError as exc:
            raise ToolError(
                f"The patch was not applied, and no file was changed:\n{exc}\n"
                "Read the files again and send a patch whose context lines match them exactly."
            ) from exc
        changes = [FileChange(ctx.resolve(result.path), result.old_text, result.new_text) for result in results]
        only_deletes = all(change.new_text is None for change in changes)
        return Intent(
            title=_title(ctx, results, changes),
            kind="delete" if changes and only_deletes else "edit",
            effect="edit",
            locations=[
                ToolCallLocation(path=change.path, line=result.line)
                for change, result in zip(changes, results, strict=True)
            ],
            content=[change.diff() for change in changes],
            changes=changes,
        )
