"""`python -m evals show RUN [--trial TASK[/N]]`: one run (ours, or a Harbor job folder) as Markdown.

What it ran (agent version and commit, model and settings, suite and task versions, date, machine, sandbox),
then one row per trial (resolved, failure mode, tokens in / cached / out, cost, agent and total seconds), and
with `--trial` that trial's trajectory step by step (ATIF: ours from the transcript, or Harbor's).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .runs import LoadedRun, load_run
from .trajectory import load_trajectory

CELL = 300  # characters of a tool's arguments or result shown in a trajectory


def _num(value: float | int | None, digits: int = 0, prefix: str = "") -> str:
    return "-" if value is None else f"{prefix}{value:,.{digits}f}"


def _short(text: str, limit: int = CELL) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + f"… ({len(text):,} chars)"


def _facts(run: LoadedRun) -> list[str]:
    facts = run.facts
    if run.kind == "harbor":
        agents = ", ".join(f"{a['name']} ({a['model'] or 'no model'})" for a in facts.get("agents", []))
        return [
            f"- Harbor job `{facts.get('job')}`: {agents}, environment {facts.get('environment')}",
            f"- started {facts.get('started_at') or '-'}, finished {facts.get('finished_at') or '-'}",
        ]
    if not facts:
        return ["- (no provenance.json: a run from before the harness recorded it)"]
    agent, model, suite = facts["agent"], facts["model"], facts["suite"]
    machine, sandbox = facts["machine"], facts["sandbox"]
    dirty = " with uncommitted changes" if agent.get("uncommitted_changes") else ""
    settings = ", ".join(f"{k}={v}" for k, v in model.get("settings", {}).items()) or "none"
    digests = ", ".join(f"{task} {digest[:12]}" for task, digest in suite["tasks"].items())
    lines = [
        f"- agent: {agent['name']} {agent['version']}, commit {agent.get('commit') or 'unknown'}{dirty}",
        f"- model: {model['name']}; CODER_AGENT_* settings passed on: {settings}",
        f"- suite: {suite['name']} (task versions: {digests})",
        f"- date: started {facts['started_at']}, finished {facts.get('finished_at') or '-'}"
        + (f", resumed {', '.join(facts['resumed_at'])}" if facts.get("resumed_at") else ""),
        f"- machine: {machine['host']}, {machine['os']}, {machine['cpus']} CPUs, Python {machine['python']}",
    ]
    if sandbox["kind"] == "docker":
        images = {image["tag"]: image for image in sandbox.get("images", {}).values()}
        shown = "; ".join(
            f"{tag} (on {image['environment']}, {image['wheel']} sha256 {image['wheel_sha256'][:12]})"
            for tag, image in images.items()
        )
        lines.append(f"- sandbox: docker {sandbox.get('server_version')}: {shown}")
    else:
        lines.append("- sandbox: local (this machine)")
    return lines


def _trials(run: LoadedRun) -> list[str]:
    lines = [
        "| task | trial | resolved | failure mode | tokens in | cached | out | cost | agent s | total s |",
        "|" + " --- |" * 10,
    ]
    for r in run.results:
        cells = [
            r.task,
            str(r.trial),
            "yes" if r.resolved else "no",
            r.failure_mode or "-",
            _num(r.input_tokens),
            _num(r.cached_tokens),
            _num(r.output_tokens),
            _num(r.cost_usd, 4, "$"),
            _num(r.wall_seconds, 1),
            _num(r.total_seconds, 1),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    resolved = sum(r.resolved for r in run.results)
    lines += ["", f"Resolved {resolved} of {len(run.results)} trial(s)."]
    return lines


def _content(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return " ".join(str(part.get("text", "")) for part in value if isinstance(part, dict))
    return "" if value is None else json.dumps(value)


def render_trajectory(trajectory: dict[str, Any]) -> list[str]:
    agent = trajectory.get("agent") or {}
    lines = [
        f"{agent.get('name')} {agent.get('version')} on {agent.get('model_name')} ({trajectory.get('schema_version')})",
        "",
    ]
    for step in trajectory.get("steps") or []:
        head = f"**{step.get('step_id')}. {step.get('source')}**"
        metrics = step.get("metrics") or {}
        if metrics.get("prompt_tokens") is not None or metrics.get("cost_usd") is not None:
            head += (
                f" (tokens in {_num(metrics.get('prompt_tokens'))}, cached {_num(metrics.get('cached_tokens'))},"
                f" out {_num(metrics.get('completion_tokens'))}, cost {_num(metrics.get('cost_usd'), 4, '$')})"
            )
        lines.append(head)
        if step.get("reasoning_content"):
            lines.append(f"  - thought: {_short(str(step['reasoning_content']))}")
        message = _content(step.get("message"))
        if message.strip():
            lines.append(f"  - says: {_short(message)}")
        results = {r.get("source_call_id"): r for r in (step.get("observation") or {}).get("results") or []}
        for call in step.get("tool_calls") or []:
            arguments = json.dumps(call.get("arguments") or {}, ensure_ascii=False)
            lines.append(f"  - calls {call.get('function_name')} {_short(arguments)}")
            if call.get("tool_call_id") in results:
                lines.append(f"    - gets: {_short(_content(results[call['tool_call_id']].get('content')))}")
    final = trajectory.get("final_metrics") or {}
    lines += [
        "",
        f"Totals: {final.get('total_steps')} steps, tokens in {_num(final.get('total_prompt_tokens'))},"
        f" cached {_num(final.get('total_cached_tokens'))}, out {_num(final.get('total_completion_tokens'))},"
        f" cost {_num(final.get('total_cost_usd'), 4, '$')}.",
    ]
    return lines


def show_run(path: Path, trial: str | None = None) -> str:
    run = load_run(path)
    lines = [f"# {run.title}", "", f"`{path}`", "", *_facts(run), "", *_trials(run)]
    if trial is not None:
        task, _, number = trial.partition("/")
        n = int(number) if number else 1
        if (task, n) not in run.trial_folders:
            raise ValueError(f"{path} has no trial {task}/{n}")
        trajectory = run.trajectory_path(task, n)
        lines += ["", f"## {task} #{n}", ""]
        if trajectory is None:
            lines.append("(no trajectory.json for this trial)")
        else:
            lines += render_trajectory(load_trajectory(trajectory))
    return "\n".join(lines) + "\n"
