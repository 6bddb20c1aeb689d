"""The built-in tools offered to the model."""

from __future__ import annotations

from typing import Any

from .apply_patch import ApplyPatch
from .base import Tool
from .edit_file import EditFile
from .list_dir import ListDir
from .read_file import ReadFile
from .run_command import RunCommand
from .search import Glob, Grep
from .todo import TodoWrite
from .write_file import WriteFile


def builtin_tools() -> list[Tool[Any]]:
    return [ReadFile(), WriteFile(), EditFile(), ApplyPatch(), RunCommand(), Grep(), Glob(), ListDir(), TodoWrite()]
