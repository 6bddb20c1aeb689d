"""`python -m evals export-harbor --suite NAME --out DIR`: a suite's tasks as Harbor tasks.

Each task becomes a folder Harbor runs (`harbor run -p DIR -a ...`) on docker or a cloud sandbox:

    task.toml                 timeouts, the mode and request limit (as the agent's settings, in the environment)
    instruction.md            the prompt, as it is
    environment/Dockerfile    FROM the base image (or the task's own environment/), the workspace at /app,
                              committed to git as the harness's trials have it
    tests/test.sh             the task's verifier with the harness's variables, writing /logs/verifier/reward.txt
    tests/...                 the hidden tests, the untouched workspace, and `eval_outputs.py`
    solution/solve.sh         the oracle (solution.patch applied with git, or the task's solve.sh)

The verifier's environment contract is the harness's: `EVAL_WORKSPACE` (/app, the cwd), `EVAL_TESTS_DIR`
(/tests/hidden), `EVAL_ORIGINAL_WORKSPACE` (/tests/original), `EVAL_TRIAL_DIR` (/logs/verifier),
`EVAL_ANSWER_FILE` and `EVAL_PLAN_FILE` (under /logs/agent). An oracle writes those two itself; for an ACP
agent under Harbor's runner they are rebuilt from the session updates it logged (`acp-events.jsonl`), so a
question or a plan task is judged the same way under Harbor as here.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from pathlib import Path

from .docker import BASE_IMAGE
from .task import Task
from .workspace import LITTER

WORKDIR = "/app"
ANSWER_FILE = "/logs/agent/agent_answer.txt"
PLAN_FILE = "/logs/agent/agent_plan.json"

_TEST_SH = """\
#!/bin/sh
# The task's verifier under Harbor, with the eval harness's variables (see evals/harness/verify.py).
mkdir -p /logs/verifier
cd {workdir}
export EVAL_WORKSPACE={workdir} EVAL_TESTS_DIR=/tests/hidden EVAL_ORIGINAL_WORKSPACE=/tests/original
export EVAL_TRIAL_DIR=/logs/verifier EVAL_ANSWER_FILE={answer} EVAL_PLAN_FILE={plan}
export PYTHONDONTWRITEBYTECODE=1
python /tests/eval_outputs.py /logs/agent/acp-events.jsonl "$EVAL_ANSWER_FILE" "$EVAL_PLAN_FILE"
if /bin/sh -c {command} >/logs/verifier/verifier.log 2>&1; then
    echo 1 >/logs/verifier/reward.txt
else
    echo 0 >/logs/verifier/reward.txt
fi
cat /logs/verifier/verifier.log
"""

# Rebuilds the answer and plan files from an ACP runner's log of session updates, when the agent did not write
# them (coder-agent's Harbor agent and the oracle do). The answer is the text of the last agent message after
# the last tool call, as the harness's client keeps it (evals/harness/client.py), without coder-agent's notes.
_EVAL_OUTPUTS = '''\
"""The answer and plan files for the verifier, from Harbor's ACP runner's acp-events.jsonl (if they are missing)."""
import json
import os
import sys

events, answer_file, plan_file = sys.argv[1:4]
if not os.path.exists(events) or (os.path.exists(answer_file) and os.path.exists(plan_file)):
    raise SystemExit(0)
answer, plan, message = [], None, None
with open(events, encoding="utf-8") as lines:
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        payload = event.get("payload") if isinstance(event, dict) else None
        update = payload.get("update") if isinstance(payload, dict) else None
        if not isinstance(update, dict):
            continue
        kind = update.get("sessionUpdate")
        if kind == "tool_call":
            answer = []
        elif kind == "agent_message_chunk":
            meta = update.get("_meta") or {}
            if isinstance(meta.get("coder-agent"), dict) and "note" in meta["coder-agent"]:
                continue
            if update.get("messageId") is not None and update.get("messageId") != message:
                message, answer = update.get("messageId"), []
            content = update.get("content") or {}
            if content.get("type") == "text":
                answer.append(str(content.get("text", "")))
        elif kind == "plan":
            plan = list(update.get("entries") or [])
os.makedirs(os.path.dirname(answer_file), exist_ok=True)
if not os.path.exists(answer_file):
    with open(answer_file, "w", encoding="utf-8") as out:
        out.write("".join(answer))
if plan is not None and not os.path.exists(plan_file):
    with open(plan_file, "w", encoding="utf-8") as out:
        json.dump(plan, out, indent=2)
'''

_SOLVE_PATCH = """\
#!/bin/sh
set -e
cd {workdir}
git apply --whitespace=nowarn /solution/solution.patch
"""

_SOLVE_SCRIPT = """\
#!/bin/sh
set -e
mkdir -p /logs/agent
cd {workdir}
export EVAL_WORKSPACE={workdir} EVAL_ANSWER_FILE={answer} EVAL_PLAN_FILE={plan}
/bin/sh /solution/task_solve.sh
"""

_GIT_START = (
    "git init -q -b main && printf '__pycache__/\\n*.pyc\\n.pytest_cache/\\n' > .git/info/exclude"
    " && git add -A && git -c user.name=evals -c user.email=evals@localhost -c commit.gpgsign=false"
    " commit -q --allow-empty -m start"
)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _toml_string(text: str) -> str:
    return json.dumps(text)  # a JSON string is a valid TOML basic string


def _copy(source: Path, target: Path) -> None:
    shutil.copytree(source, target, symlinks=True, ignore=shutil.ignore_patterns(*LITTER))


def _dockerfile(task: Task, base_image: str) -> str:
    head = f"FROM {base_image}\n"
    if task.environment_dir is not None:
        head = (task.environment_dir / "Dockerfile").read_text(encoding="utf-8").rstrip() + "\n"
    # Harbor's container runs `sh -c "sleep infinity"` as pid 1, which ignores SIGTERM: each trial's teardown
    # would wait out docker's 10 s stop timeout (the trial is over by then; nothing is left to flush).
    stop = "" if "STOPSIGNAL" in head.upper() else "STOPSIGNAL SIGKILL\n"
    return f"{head}{stop}COPY workspace/ {WORKDIR}/\nWORKDIR {WORKDIR}\nRUN {_GIT_START}\n"


def _task_toml(task: Task) -> str:
    config = task.config
    env = {"CODER_AGENT_MAX_TURN_REQUESTS": str(config.limits.max_turn_requests)}
    if config.mode is not None:
        env["CODER_AGENT_DEFAULT_MODE"] = config.mode
    lines = [
        'schema_version = "1.4"',
        "",
        "[metadata]",
        f"source = {_toml_string('coder-agent evals: ' + task.id)}",
        f"description = {_toml_string(config.description)}",
        f"tags = {json.dumps(config.tags)}",
        "",
        "[verifier]",
        f"timeout_sec = {config.timeouts.verifier_seconds:g}",
        "",
        "[agent]",
        f"timeout_sec = {config.limits.wall_clock_seconds:g}",
        "",
        "[environment]",
        f"workdir = {_toml_string(WORKDIR)}",
        "",
        "[environment.env]",
        *(f"{name} = {_toml_string(value)}" for name, value in env.items()),
        "",
    ]
    return "\n".join(lines)


def export_task(task: Task, out: Path, base_image: str = BASE_IMAGE) -> Path:
    """Write `task` as a Harbor task folder `out/<task id>` (replacing it); returns the folder."""
    folder = out / task.id
    if folder.exists():
        shutil.rmtree(folder)
    (folder / "environment").mkdir(parents=True)
    if task.environment_dir is not None:
        _copy(task.environment_dir, folder / "environment")
    _copy(task.workspace_dir, folder / "environment" / "workspace")
    (folder / "environment" / "Dockerfile").write_text(_dockerfile(task, base_image), encoding="utf-8")
    (folder / "instruction.md").write_text(task.instruction, encoding="utf-8")
    (folder / "task.toml").write_text(_task_toml(task), encoding="utf-8")

    tests = folder / "tests"
    if task.tests_dir is not None:
        _copy(task.tests_dir, tests / "hidden")
    else:
        (tests / "hidden").mkdir(parents=True)
    _copy(task.workspace_dir, tests / "original")
    (tests / "eval_outputs.py").write_text(_EVAL_OUTPUTS, encoding="utf-8")
    test_sh = _TEST_SH.format(
        workdir=WORKDIR, answer=ANSWER_FILE, plan=PLAN_FILE, command=_quote(task.config.verifier.command)
    )
    (tests / "test.sh").write_text(test_sh, encoding="utf-8")
    (tests / "test.sh").chmod(0o755)

    solution = task.solution_dir
    if solution is not None and (solution / "solution.patch").is_file():
        (folder / "solution").mkdir()
        shutil.copy2(solution / "solution.patch", folder / "solution" / "solution.patch")
        solve = _SOLVE_PATCH.format(workdir=WORKDIR)
    elif solution is not None and (solution / "solve.sh").is_file():
        _copy(solution, folder / "solution")
        (folder / "solution" / "solve.sh").rename(folder / "solution" / "task_solve.sh")
        solve = _SOLVE_SCRIPT.format(workdir=WORKDIR, answer=ANSWER_FILE, plan=PLAN_FILE)
    else:
        return folder
    (folder / "solution" / "solve.sh").write_text(solve, encoding="utf-8")
    (folder / "solution" / "solve.sh").chmod(0o755)
    return folder


def export_suite(tasks: Iterable[Task], out: Path, base_image: str = BASE_IMAGE) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    return [export_task(task, out, base_image) for task in tasks]
