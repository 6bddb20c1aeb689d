"""`python -m evals export-preds RUN --out preds.jsonl`: a run's patches in SWE-bench's predictions format.

One line per task: `instance_id` (the task id), `model_name_or_path` (the run's model) and `model_patch`
(the `git diff` of the trial's workspace against its start, saved as `model.patch` when the agent stopped).
With several trials per task, `--trial N` picks which one (default 1).
"""

from __future__ import annotations

import json
from pathlib import Path

from .config import RunConfig
from .results import load_results, trial_dir


def export_preds(run_dir: Path, out: Path, trial: int = 1) -> int:
    """Write the predictions file; returns how many lines it has."""
    config = RunConfig.load(run_dir)
    rows = []
    for result in load_results(run_dir):
        if result.trial != trial:
            continue
        patch_file = trial_dir(run_dir, result.task, result.trial) / "model.patch"
        patch = patch_file.read_text(encoding="utf-8") if patch_file.is_file() else ""
        rows.append({"instance_id": result.task, "model_name_or_path": config.model_name, "model_patch": patch})
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return len(rows)
