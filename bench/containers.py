"""The container path's cost: the smoke suite offline through our harness here and in containers (golden and null
scripts, editor client, one trial at a time), per-trial time both ways and the difference; the images' build
(the wheelhouse and the agent's layer, timed cold when asked); and with --harbor, the suite under Harbor: its
oracle on every task, and coder-agent (from this checkout's wheel) against golden scripts, with Harbor's phases.

Needs `bash evals/docker/setup.sh [--harbor]` first (its own output times the set-up from cold).

    python bench/containers.py [--tasks a,b] [--cold-images] [--harbor [--harbor-tasks a,b]]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import anyio
from rich.console import Console

from coder_agent.scripted.script import Script
from coder_agent.scripted.server import ScriptedModelServer
from evals.harness import RunConfig, run_eval
from evals.harness.config import REPO_ROOT
from evals.harness.docker import BASE_IMAGE, agent_image, agent_wheel, bridge_gateway, cache_dir, wheelhouse
from evals.harness.harbor_export import export_suite
from evals.harness.runs import load_run
from evals.harness.suite import load_suite, select_tasks

HARBOR = os.environ.get("EVALS_HARBOR") or "/var/tmp/coder-agent-evals-harbor/bin/harbor"


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _suite_both_ways(tasks: list[str], root: Path) -> None:
    console = Console(stderr=True, force_terminal=False, quiet=True)
    rows = []
    per_trial: dict[str, list[float]] = {}
    for sandbox in ("local", "docker"):
        for offline in ("golden", "null"):
            config = RunConfig(suite="smoke", tasks=tasks, offline=offline, sandbox=sandbox)  # type: ignore[arg-type]
            started = time.monotonic()
            results = anyio.run(lambda c=config, d=root / f"{sandbox}-{offline}": run_eval(c, d, console=console))
            wall = time.monotonic() - started
            resolved = sum(r.resolved for r in results)
            violations = sum(len(r.schema_violations) + len(r.protocol_violations) for r in results)
            per_trial.setdefault(sandbox, []).extend(r.total_seconds for r in results)
            rows.append((sandbox, offline, f"{resolved}/{len(results)}", violations, wall, results))
    print("| sandbox | script | resolved | violations | run wall s | trial s (median) | agent s (median) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for sandbox, offline, resolved, violations, wall, results in rows:
        trial = _median([r.total_seconds for r in results])
        agent = _median([r.wall_seconds for r in results])
        print(f"| {sandbox} | {offline} | {resolved} | {violations} | {wall:.1f} | {trial:.2f} | {agent:.2f} |")
    local, docker = _median(per_trial["local"]), _median(per_trial["docker"])
    print(f"\nPer-trial overhead of the container path: {docker - local:+.2f} s (median {docker:.2f} vs {local:.2f} s)")


def _images(cold: bool) -> None:
    if cold:
        shutil.rmtree(cache_dir(), ignore_errors=True)
        names = subprocess.run(
            ["docker", "images", "--format", "{{.Repository}}:{{.Tag}}", "coder-agent-evals-agent"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        if names:
            subprocess.run(["docker", "rmi", "-f", *names], capture_output=True, check=False)
    started = time.monotonic()
    wheelhouse(BASE_IMAGE)
    wheels = time.monotonic() - started
    started = time.monotonic()
    image = agent_image(BASE_IMAGE)
    print(
        f"\nImages ({'cold' if cold else 'as cached'}): the wheelhouse {wheels:.1f} s,"
        f" the agent's image {image.tag} {time.monotonic() - started:.1f} s"
    )


def _seconds(span: dict[str, str] | None) -> float:
    if not span:
        return float("nan")
    parse = lambda text: datetime.fromisoformat(text.replace("Z", "+00:00"))  # noqa: E731
    return (parse(span["finished_at"]) - parse(span["started_at"])).total_seconds()


def _harbor(root: Path, tasks: list[str]) -> None:
    exported = root / "harbor-tasks"
    export_suite(select_tasks(load_suite("smoke"), []), exported)
    jobs = root / "harbor-jobs"
    jobs.mkdir()
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    base = [HARBOR, "run", "-o", str(jobs), "-y", "-q", "-p", str(exported)]
    started = time.monotonic()
    subprocess.run([*base, "--job-name", "oracle", "-a", "oracle", "-n", "4"], env=env, capture_output=True, check=True)
    oracle = load_run(jobs / "oracle")
    print(
        f"\nHarbor oracle: {sum(r.resolved for r in oracle.results)}/{len(oracle.results)} scored 1.0"
        f" in {time.monotonic() - started:.0f} s (4 at a time)"
    )
    wheel = agent_wheel()
    wheels = wheelhouse(BASE_IMAGE)
    smoke = {task.id: task for task in load_suite("smoke").tasks()}
    gateway = bridge_gateway()
    print("\n| task | reward | env set-up s | agent install s | agent run s | verifier s | trial s | tokens in/out |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for task in tasks:
        with ScriptedModelServer(Script.load(smoke[task].script("golden")), host=gateway) as server:
            agent = ["-a", "evals.harbor_agent:CoderAgent", "-m", "openai/scripted", "--ak", f"wheel={wheel}"]
            agent += ["--ak", f"wheelhouse={wheels}", "--ae", f"CODER_AGENT_API_BASE={server.url}"]
            agent += ["--ae", "CODER_AGENT_API_KEY=sk-offline", "--ae", "CODER_AGENT_MAX_RETRIES=0"]
            subprocess.run([*base, "--job-name", task, "-i", task, *agent], env=env, capture_output=True, check=True)
        [path] = list((jobs / task).glob("*/result.json"))
        trial = json.loads(path.read_text())
        [result] = load_run(jobs / task).results
        reward = (trial.get("verifier_result") or {}).get("rewards", {}).get("reward")
        phases = [_seconds(trial.get(k)) for k in ("environment_setup", "agent_setup", "agent_execution", "verifier")]
        cells = [task, str(reward), *(f"{p:.1f}" for p in phases), f"{_seconds(trial):.1f}"]
        cells.append(f"{result.input_tokens}/{result.output_tokens}")
        print("| " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", default="", help="smoke task ids (default: all 12)")
    parser.add_argument("--cold-images", action="store_true", help="remove the wheelhouse and agent images first")
    parser.add_argument("--harbor", action="store_true", help="also run the suite under Harbor")
    parser.add_argument("--harbor-tasks", default="off-by-one,plan-only,question-no-edit")
    args = parser.parse_args()
    tasks = [t for t in args.tasks.split(",") if t]
    with tempfile.TemporaryDirectory(prefix="bench-containers-") as tmp:
        root = Path(tmp)
        print(f"load average before: {os.getloadavg()[0]:.2f}")
        _images(args.cold_images)
        print()
        _suite_both_ways(tasks, root)
        if args.harbor:
            _harbor(root, [t for t in args.harbor_tasks.split(",") if t])
        print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
