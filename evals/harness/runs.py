"""A run folder, ours or Harbor's, read the same way: so `show` and `compare` take either.

Ours: `run.json`, `provenance.json`, `trials/TASK/N/{result.json,trajectory.json}`.

Harbor's job folder (`harbor run -o JOBS --job-name NAME` writes `JOBS/NAME`): `config.json`, `result.json`, and
one folder per trial, `TASK__ID/`, with `result.json` (reward, tokens, cost, times, exception) and
`agent/trajectory.json` (ATIF). A trial is resolved when its reward is 1 (Harbor's rewards may be partial); its
trials are numbered per task in the order they started.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from . import provenance
from .config import RunConfig
from .results import Attempt, TrialResult, failure_mode, load_results, trial_dir


@dataclass
class LoadedRun:
    path: Path
    kind: str  # "evals" or "harbor"
    title: str
    results: list[TrialResult]
    facts: dict[str, Any] = field(default_factory=dict)  # provenance, or what Harbor's job says of itself
    trial_folders: dict[tuple[str, int], Path] = field(default_factory=dict)

    def trajectory_path(self, task: str, trial: int) -> Path | None:
        folder = self.trial_folders.get((task, trial))
        if folder is None:
            return None
        for candidate in (folder / "trajectory.json", folder / "agent" / "trajectory.json"):
            if candidate.is_file():
                return candidate
        return None


def is_harbor_job(path: Path) -> bool:
    config = path / "config.json"
    if not config.is_file():
        return False
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except ValueError:
        return False
    return isinstance(data, dict) and "job_name" in data


def _seconds(span: Any) -> float:
    if not isinstance(span, dict) or not span.get("started_at") or not span.get("finished_at"):
        return 0.0
    started = datetime.fromisoformat(str(span["started_at"]).replace("Z", "+00:00"))
    finished = datetime.fromisoformat(str(span["finished_at"]).replace("Z", "+00:00"))
    return round((finished - started).total_seconds(), 3)


def _harbor_trial(data: dict[str, Any], number: int) -> TrialResult:
    agent = (data.get("config") or {}).get("agent") or {}
    info = data.get("agent_info") or {}
    outcome = data.get("agent_result") or {}
    rewards = (data.get("verifier_result") or {}).get("rewards") or {}
    reward = rewards.get("reward")
    resolved = isinstance(reward, int | float) and reward >= 1.0
    acp = ((outcome.get("metadata") or {}).get("acp") or {}) if isinstance(outcome.get("metadata"), dict) else {}
    stop = (acp.get("prompt_response") or {}).get("stopReason") if isinstance(acp, dict) else None
    exception = data.get("exception_info")
    attempt = Attempt(
        stop_reason=stop,
        agent_seconds=_seconds(data.get("agent_execution")),
        verifier_exit_code=None if reward is None else (0 if resolved else 1),
        verifier_seconds=_seconds(data.get("verifier")),
        passed=resolved,
    )
    if exception:
        attempt.error = f"{exception.get('exception_type')}: {str(exception.get('exception_message', ''))[:500]}"
    tokens_in, tokens_out = outcome.get("n_input_tokens"), outcome.get("n_output_tokens")
    result = TrialResult(
        task=str(data.get("task_name")),
        trial=number,
        profile="harbor",
        model=str(agent.get("model_name") or info.get("name") or "unknown"),
        resolved=resolved,
        stop_reason=stop,
        error=attempt.error,
        tokens=int(tokens_in or 0) + int(tokens_out or 0),
        input_tokens=tokens_in,
        cached_tokens=outcome.get("n_cache_tokens"),
        output_tokens=tokens_out,
        cost_usd=outcome.get("cost_usd"),
        wall_seconds=attempt.agent_seconds,
        total_seconds=_seconds(data),
        attempts=[attempt],
    )
    result.failure_mode = "agent_error" if exception and not resolved else failure_mode(result)
    return result


def load_harbor_job(path: Path) -> LoadedRun:
    config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    trials: list[tuple[str, str, Path, dict[str, Any]]] = []
    for result_path in sorted(path.glob("*/result.json")):
        data = json.loads(result_path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and "task_name" in data:
            trials.append((str(data["task_name"]), str(data.get("started_at") or ""), result_path.parent, data))
    results, folders, counts = [], {}, {}  # type: ignore[var-annotated]
    for task, _, folder, data in sorted(trials, key=lambda t: (t[0], t[1])):
        counts[task] = counts.get(task, 0) + 1
        results.append(_harbor_trial(data, counts[task]))
        folders[(task, counts[task])] = folder
    agents = config.get("agents") or [config.get("agent") or {}]
    facts = {
        "job": config.get("job_name"),
        "agents": [{"name": a.get("name") or a.get("import_path"), "model": a.get("model_name")} for a in agents],
        "environment": (config.get("environment") or {}).get("type"),
        "n_attempts": config.get("n_attempts"),
    }
    job_result = path / "result.json"
    if job_result.is_file():
        summary = json.loads(job_result.read_text(encoding="utf-8"))
        facts.update(started_at=summary.get("started_at"), finished_at=summary.get("finished_at"))
    title = f"Harbor job {config.get('job_name')}"
    return LoadedRun(path, "harbor", title, results, facts, folders)


def load_run(path: Path) -> LoadedRun:
    """Our run folder or a Harbor job folder; ValueError for anything else."""
    if is_harbor_job(path):
        return load_harbor_job(path)
    config = RunConfig.load(path)  # ValueError when it is not a run folder
    results = load_results(path)
    folders = {(r.task, r.trial): trial_dir(path, r.task, r.trial) for r in results}
    title = f"{config.suite}: {config.model_name} ({config.profile} client, {config.sandbox})"
    return LoadedRun(path, "evals", title, results, provenance.load(path) or {}, folders)
