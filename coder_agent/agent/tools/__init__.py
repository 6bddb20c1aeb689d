"""The built-in tools offered to the model.

Importing this package imports none of them: `session/new` is answered without them, and the first prompt
(or the background preload after `session/new`) imports them through `builtin_tools()`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import Tool
    from .fetch_addresses import FetchPolicy


def builtin_tools(fetch_policy: Callable[[], FetchPolicy] | None = None, ripgrep: str | None = None) -> list[Tool[Any]]:
    """The built-in tools. `fetch_policy`: what the user's config lets `fetch` reach besides public addresses
    (default: nothing); `ripgrep`: the setting of that name (the rg the search tools run)."""
    from ..workspace.ripgrep import RgOptions
    from .apply_patch import ApplyPatch
    from .ask_user import AskUser
    from .diagnostics import DiagnosticsTool
    from .edit_file import EditFile
    from .fetch import Fetch
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
        Fetch(fetch_policy) if fetch_policy is not None else Fetch(),
        DiagnosticsTool(),
    ]
