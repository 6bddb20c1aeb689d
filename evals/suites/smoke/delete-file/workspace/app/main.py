"""Export the records."""

from __future__ import annotations

import json

from app.legacy_export import export_legacy

RECORDS = [{"id": 1, "name": "ada"}, {"id": 2, "name": "grace"}]


def run() -> str:
    export_legacy(RECORDS)
    return json.dumps(RECORDS)


if __name__ == "__main__":
    print(run())
