"""The built-in tools offered to the model."""

from __future__ import annotations

from typing import Any

from .base import Tool


def builtin_tools() -> list[Tool[Any]]:
    return []
