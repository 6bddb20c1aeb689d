"""What a trial leaves behind (`result.json`) and how a run folder is laid out.

RUN/run.json                       the run's settings (`RunConfig`), for --resume and reports
RUN/summary.json, RUN/summary.md   written when the run ends
RUN/trials/TASK/N/                 one trial: result.json, transcript.jsonl, agent.stderr.log,
                                   agent_answer.txt, agent_plan.json, model.patch, verifier*.log,
                                   workspace/, home/
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import one_line

FailureMode = Literal[
    "harness_error",  # the harness could not run the trial (a bug or a broken task, not the agent's fault)
    "agent_error",  # the agent failed to start, crashed, or answered the prompt with a JSON-RPC error
    "schema_violation",  # the agent wrote a line that is not valid ACP v1, or broke the protocol
    "timeout",  # the wall-clock limit was hit (the turn was cancelled)
    "cost_limit",  # the cost limit was hit (the turn was cancelled)
    "max_turn_requests",  # the agent stopped at its model-request limit
    "max_tokens",
    "refusal",
    "verifier_timeout",
    "verifier_failed",
]


class Attempt(BaseModel):
    """One prompt and the verification after it (a retry is a second attempt in the same session)."""

    stop_reason: str | None = None
    error: str | None = None
    limit_hit: Literal["timeout", "cost_limit"] | None = None
    agent_seconds: float = 0.0
    verifier_exit_code: int | None = None
    verifier_timed_out: bool = False
    verifier_seconds: float = 0.0
    passed: bool = False


class TrialResult(BaseModel):
    model_config = ConfigDict(extra="ignore")

    task: str
    trial: int
    profile: str
    model: str
    resolved: bool = False
    stop_reason: str | None = None
    failure_mode: FailureMode | None = None
    error: str | None = None
    tokens: int = 0
    input_tokens: int | None = None  # all prompt tokens of the trial's model calls (when the agent says)
    cached_tokens: int | None = None  # of those, read from the provider's prompt cache
    output_tokens: int | None = None
    model_requests: int = 0
    cost_usd: float | None = None
    wall_seconds: float = 0.0  # agent time: all prompts, from session/prompt to its answer
    total_seconds: float = 0.0  # the whole trial, set-up and verification included
    tool_calls: int = 0
    permission_requests: int = 0
    attempts: list[Attempt] = Field(default_factory=list)
    schema_violations: list[str] = Field(default_factory=list)
    protocol_violations: list[str] = Field(default_factory=list)
    agent_killed: bool = False  # it did not exit within seconds of stdin closing

    def save(self, folder: Path) -> None:
        path = folder / "result.json"
        partial = folder / "result.json.part"
        partial.write_text(self.model_dump_json(indent=2) + "\n", encoding="utf-8")
        partial.replace(path)  # a result.json is always whole: --resume trusts it

    @classmethod
    def load(cls, folder: Path) -> TrialResult:
        path = folder / "result.json"
        try:
            return cls.model_validate_json(path.read_text(encoding="utf-8"))
        except ValidationError as exc:
            raise ValueError(f"{path} is not a trial's result: {one_line(exc)}") from exc


def trial_dir(run_dir: Path, task: str, trial: int) -> Path:
    return run_dir / "trials" / task / str(trial)


def load_results(run_dir: Path) -> list[TrialResult]:
    results = [TrialResult.load(path.parent) for path in sorted((run_dir / "trials").glob("*/*/result.json"))]
    return sorted(results, key=lambda result: (result.task, result.trial))


_STOPS: dict[str, FailureMode] = {
    "max_turn_requests": "max_turn_requests",
    "max_tokens": "max_tokens",
    "refusal": "refusal",
}


def failure_mode(result: TrialResult) -> FailureMode | None:
    """Why a trial is not a clean pass; None when it resolved with a clean wire."""
    if result.schema_violations or result.protocol_violations:
        return "schema_violation"
    if result.resolved:
        return None
    last = result.attempts[-1] if result.attempts else None
    if last is None:
        return "harness_error" if result.error else "agent_error"
    if last.limit_hit is not None:
        return last.limit_hit
    if last.error is not None:
        return "agent_error"
    if last.stop_reason in _STOPS:
        return _STOPS[last.stop_reason]
    return "verifier_timeout" if last.verifier_timed_out else "verifier_failed"
