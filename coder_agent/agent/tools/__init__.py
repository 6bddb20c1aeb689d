"""The built-in tools offered to the model.

Importing this package imports none of them: `session/new` is answered without them, and the first prompt
(or the background preload after `session/new`) imports them through `builtin_tools()`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import Tool


def builtin_tools(ripgrep: str | None = None) -> list[Tool[Any]]:
    """The built-in tools; `ripgrep` is the setting of that name (the rg the search tools run)."""
    from ..workspace.ripgrep import RgOptions
    from .apply_patch import ApplyPatch
    from .ask_user import AskUser
    from .edit_file import EditFile
    from .list_dir import ListDir
    from .read_file import ReadFile
    from .run_command import RunCommand
    from .search import Glob, Grep
    from .todo import TodoWrite
    from .write_file import WriteFile

    rg = RgOptions(program=ripgrep)
    return [
        *(ReadFile(), WriteFile(), EditFile(), ApplyPatch(), RunCommand(), Grep(rg=rg), Glob(rg=rg), ListDir(rg=rg)),
        *(TodoWrite(), AskUser()),
    ]
