"""Splitting a list into pages."""

from __future__ import annotations

import math
from typing import TypeVar

T = TypeVar("T")


def page_count(total: int, size: int) -> int:
    """How many pages of `size` items it takes to show `total` items."""
    return math.ceil(total / size) if total else 0


def paginate(items: list[T], page: int, size: int) -> list[T]:
    """The items on page `page` (1-based), `size` per page; [] past the last page."""
    if page < 1 or size < 1:
        raise ValueError("page and size must be at least 1")
    start = page * size
    return items[start : start + size]
