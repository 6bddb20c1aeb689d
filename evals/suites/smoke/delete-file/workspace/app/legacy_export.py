"""The old CSV export (replaced by the JSON export in main.py)."""

from __future__ import annotations


def export_legacy(records: list[dict[str, object]]) -> str:
    header = ",".join(records[0]) if records else ""
    rows = [",".join(str(value) for value in record.values()) for record in records]
    return "\n".join([header, *rows])
