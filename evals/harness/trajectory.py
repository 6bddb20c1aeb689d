"""A trial's trajectory in Harbor's format (ATIF v1.6), rebuilt from its transcript; and reading one back.

`trajectory.json` is written next to `transcript.jsonl` (which stays the record: every raw line both ways).
The same format is what Harbor's ACP runner writes for a trial (`agent/trajectory.json`), so `harbor view` and
`python -m evals show` read either.

Steps: each `session/prompt` is a user step; each model call an agent step, closed by its `usage_update` (which
coder-agent sends after every call, before the tools it asked for run): the text and thoughts streamed before
it, the tool calls announced after it, and their results (a terminal's output as the client last served it).
The call's tokens and the cost it added are the step's metrics, from `usage_update` and its `_meta` split.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .wire import read_transcript

SCHEMA = "ATIF-v1.6"


@dataclass
class _Step:
    message: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[str, dict[str, Any]] = field(default_factory=dict)
    results: dict[str, list[str]] = field(default_factory=dict)
    terminals: dict[str, str] = field(default_factory=dict)  # tool call id -> terminal id shown in it
    metrics: dict[str, Any] | None = None


def _text(content: Any) -> str:
    if isinstance(content, dict):
        if content.get("type") == "text":
            return str(content.get("text", ""))
        if content.get("type") == "content":
            return _text(content.get("content"))
        if content.get("type") == "diff":
            return f"[diff of {content.get('path')}]"
    return ""


class _Builder:
    def __init__(self) -> None:
        self.steps: list[tuple[str, Any]] = []  # ("user", text) or ("agent", _Step)
        self.pending = _Step()
        self.last: _Step | None = None
        self.owner: dict[str, _Step] = {}  # tool call id -> its step
        self.terminal_output: dict[str, str] = {}
        self.output_requests: dict[Any, str] = {}  # the agent's terminal/output request id -> terminal id
        self.cost = 0.0
        self.session_id: str | None = None
        self.agent_info: dict[str, Any] = {}  # initialize's agentInfo

    def client(self, message: dict[str, Any]) -> None:
        if message.get("method") == "session/prompt":
            self.close_pending()
            params = message.get("params") or {}
            self.steps.append(("user", "".join(_text(block) for block in params.get("prompt") or [])))
            self.last = None
        elif "result" in message and message.get("id") in self.output_requests:
            result = message["result"] if isinstance(message["result"], dict) else {}
            self.terminal_output[self.output_requests.pop(message["id"])] = str(result.get("output", ""))

    def agent(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        result = message.get("result")
        if isinstance(result, dict) and isinstance(result.get("agentInfo"), dict):
            self.agent_info = result["agentInfo"]
        if isinstance(result, dict) and isinstance(result.get("sessionId"), str) and self.session_id is None:
            self.session_id = result["sessionId"]
        if method == "terminal/output":
            self.output_requests[message.get("id")] = str(params.get("terminalId"))
        if method == "session/update" and isinstance(params.get("update"), dict):
            self.update(params["update"])

    def close_pending(self) -> None:
        step = self.pending
        if step.message or step.reasoning or step.calls or step.metrics is not None:
            self.steps.append(("agent", step))
            self.last = step
        self.pending = _Step()

    def update(self, update: dict[str, Any]) -> None:
        kind = update.get("sessionUpdate")
        if kind == "agent_message_chunk":
            self.pending.message.append(_text(update.get("content")))
        elif kind == "agent_thought_chunk":
            self.pending.reasoning.append(_text(update.get("content")))
        elif kind == "usage_update":
            self.pending.metrics = self._metrics(update)
            self.close_pending()
        elif kind in ("tool_call", "tool_call_update"):
            self._tool(kind, update)

    def _metrics(self, update: dict[str, Any]) -> dict[str, Any]:
        meta = update.get("_meta")
        ours = meta.get("coder-agent") if isinstance(meta, dict) else None
        split = ours.get("usage") if isinstance(ours, dict) else None
        metrics: dict[str, Any] = {
            "extra": {"context_tokens": update.get("used"), "context_window": update.get("size")}
        }
        if isinstance(split, dict):
            metrics.update(
                prompt_tokens=split.get("inputTokens"),
                cached_tokens=split.get("cachedReadTokens"),
                completion_tokens=split.get("outputTokens"),
            )
        cost = update.get("cost")
        if isinstance(cost, dict) and isinstance(cost.get("amount"), int | float):
            metrics["cost_usd"] = round(float(cost["amount"]) - self.cost, 6)  # the session's total so far
            self.cost = float(cost["amount"])
        return metrics

    def _tool(self, kind: str, update: dict[str, Any]) -> None:
        call_id = str(update.get("toolCallId"))
        step = self.owner.get(call_id)
        if step is None:
            # A call the model asked for is announced after its usage_update: it belongs to that call's step.
            use_last = self.last is not None and not self.pending.message and not self.pending.reasoning
            step = self.last if use_last and self.last is not None else self.pending
            self.owner[call_id] = step
        call = step.calls.setdefault(call_id, {"tool_call_id": call_id, "function_name": "tool", "arguments": {}})
        if kind == "tool_call" or update.get("kind"):
            call["function_name"] = str(update.get("kind") or "") or str(update.get("title") or "tool")
            call.setdefault("extra", {})["title"] = update.get("title")
        if isinstance(update.get("rawInput"), dict):
            call["arguments"] = update["rawInput"]
        for item in update.get("content") or []:
            if isinstance(item, dict) and item.get("type") == "terminal":
                step.terminals[call_id] = str(item.get("terminalId"))
        if update.get("status") in ("completed", "failed"):
            parts = [_text(item) for item in update.get("content") or []]
            if call_id in step.terminals:
                parts.append(self.terminal_output.get(step.terminals[call_id], ""))
            if update.get("rawOutput") is not None:
                parts.append(json.dumps(update["rawOutput"], ensure_ascii=False))
            step.results[call_id] = [part for part in parts if part]


def build_trajectory(transcript: Path, model: str) -> dict[str, Any]:
    """The trajectory of a trial from its transcript (see the module docstring); the agent as it named itself."""
    builder = _Builder()
    for side, message in read_transcript(transcript):
        if message is not None:
            (builder.client if side == "client" else builder.agent)(message)
    builder.close_pending()
    steps: list[dict[str, Any]] = []
    totals = {"prompt": 0, "completion": 0, "cached": 0, "known": False}
    for source, content in builder.steps:
        entry: dict[str, Any] = {"step_id": len(steps) + 1, "source": source}
        if source == "user":
            entry["message"] = content
        else:
            entry.update(model_name=model, message="".join(content.message))
            if content.reasoning:
                entry["reasoning_content"] = "".join(content.reasoning)
            if content.calls:
                entry["tool_calls"] = list(content.calls.values())
            if content.results:
                results = [{"source_call_id": k, "content": "\n\n".join(v)} for k, v in content.results.items()]
                entry["observation"] = {"results": results}
            if content.metrics is not None:
                entry["metrics"] = content.metrics
                if content.metrics.get("prompt_tokens") is not None:
                    totals["known"] = True
                    totals["prompt"] += int(content.metrics["prompt_tokens"] or 0)
                    totals["completion"] += int(content.metrics.get("completion_tokens") or 0)
                    totals["cached"] += int(content.metrics.get("cached_tokens") or 0)
        steps.append(entry)
    final: dict[str, Any] = {"total_steps": len(steps), "total_cost_usd": builder.cost or None}
    if totals["known"]:
        final.update(
            total_prompt_tokens=totals["prompt"],
            total_completion_tokens=totals["completion"],
            total_cached_tokens=totals["cached"],
        )
    return {
        "schema_version": SCHEMA,
        "session_id": builder.session_id,
        "agent": {
            "name": str(builder.agent_info.get("name") or "unknown"),
            "version": str(builder.agent_info.get("version") or "unknown"),
            "model_name": model,
        },
        "steps": steps,
        "notes": "Rebuilt by the coder-agent eval harness from the trial's ACP transcript (transcript.jsonl).",
        "final_metrics": final,
    }


def write_trajectory(folder: Path, model: str) -> Path | None:
    transcript = folder / "transcript.jsonl"
    if not transcript.is_file():
        return None
    trajectory = build_trajectory(transcript, model)
    path = folder / "trajectory.json"
    path.write_text(json.dumps(trajectory, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def load_trajectory(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not str(data.get("schema_version", "")).startswith("ATIF"):
        raise ValueError(f"{path} is not an ATIF trajectory")
    return data
