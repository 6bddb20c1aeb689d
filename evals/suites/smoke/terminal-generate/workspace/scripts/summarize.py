"""Summarise data/measurements.csv into report/summary.json (run from the project root)."""

from __future__ import annotations

import csv
import hashlib
import json
import statistics
from pathlib import Path

SOURCE = Path("data/measurements.csv")
TARGET = Path("report/summary.json")


def main() -> None:
    raw = SOURCE.read_bytes()
    with SOURCE.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    by_sensor: dict[str, list[float]] = {}
    for row in rows:
        by_sensor.setdefault(row["sensor"], []).append(float(row["celsius"]))
    summary = {
        "source_sha256": hashlib.sha256(raw).hexdigest(),
        "rows": len(rows),
        "sensors": {
            name: {"count": len(values), "mean": round(statistics.fmean(values), 3), "max": max(values)}
            for name, values in sorted(by_sensor.items())
        },
    }
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    TARGET.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    print(f"wrote {TARGET}: {len(rows)} rows from {len(by_sensor)} sensors")


if __name__ == "__main__":
    main()
