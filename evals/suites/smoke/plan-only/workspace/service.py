"""User lookups against the (slow) database."""

from __future__ import annotations

import time
from typing import Any

_DB: dict[int, dict[str, Any]] = {1: {"id": 1, "name": "ada"}, 2: {"id": 2, "name": "grace"}}


def _query(user_id: int) -> dict[str, Any] | None:
    time.sleep(0.05)  # stands in for a round trip to the database
    row = _DB.get(user_id)
    return dict(row) if row is not None else None


def fetch_user(user_id: int) -> dict[str, Any] | None:
    return _query(user_id)


def update_user(user_id: int, **fields: Any) -> None:
    _DB.setdefault(user_id, {"id": user_id}).update(fields)
