"""A third-party ACP client drives the agent: `acpx --approve-all --format json exec` edits a file and runs a command.

acpx (npm, needs node >= 22.13) starts the agent from its `--agent` command line, prints every ACP message of
the run as NDJSON, and exits when the prompt is answered. It is installed once, with a node 22 from npm, into
`<repo>/.cache/acpx/` (gitignored). Two profiles: acpx as it comes, which advertises `fs` and `terminal` (the
agent writes through `fs/write_text_file` and runs the command in acpx's terminal), and `--no-fs --no-terminal`
(the agent writes to disk and runs the command itself). The test is skipped only when npm is missing.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.acp_client import base_env
from tests.support.agent_env import REPO_ROOT, EnvFactory

pytestmark = pytest.mark.e2e

CACHE = REPO_ROOT / ".cache" / "acpx"
MANIFEST = {
    "name": "coder-agent-acpx",
    "private": True,
    "dependencies": {"acpx": "~0.19.1", "node": "^22.13.0"},
    # npm 12 skips dependency install scripts unless allowed; the node package fetches its binary in one.
    "allowScripts": {"node": True},
}
INSTALL_TIMEOUT = 600.0
RUN_TIMEOUT = 120.0  # the whole acpx run; the first prompt waits for litellm to import
CONTENT = "hello from acpx\n"
COMMAND = "cat hello.txt > ran.txt && echo ran"


@dataclass(frozen=True)
class Acpx:
    node: Path
    cli: Path

    def command(self, *args: str) -> list[str]:
        return [str(self.node), str(self.cli), *args]


def _installed() -> Acpx | None:
    acpx = Acpx(CACHE / "node_modules" / "node" / "bin" / "node", CACHE / "node_modules" / "acpx" / "dist" / "cli.js")
    stamp = CACHE / "installed.json"
    if stamp.is_file() and json.loads(stamp.read_text()) == MANIFEST and acpx.node.is_file() and acpx.cli.is_file():
        return acpx
    return None


def install_acpx() -> Acpx:
    """acpx and node 22 in CACHE: reused when the stamp matches MANIFEST, else installed afresh (under a lock)."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed: this test installs the ACP client acpx (and node 22) with npm")
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    with open(CACHE.parent / "acpx.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another test process may be installing it right now
        if (acpx := _installed()) is not None:
            return acpx
        shutil.rmtree(CACHE, ignore_errors=True)
        CACHE.mkdir()
        (CACHE / "package.json").write_text(json.dumps(MANIFEST, indent=2) + "\n")
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=CACHE,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
            check=False,
        )
        if done.returncode != 0:
            pytest.fail(f"npm install of {MANIFEST['dependencies']} in {CACHE} failed:\n{done.stderr[-3000:]}")
        (CACHE / "installed.json").write_text(json.dumps(MANIFEST))
        acpx = _installed()
        if acpx is None:
            pytest.fail(f"npm install in {CACHE} left no node binary or acpx cli.js (install scripts blocked?)")
        return acpx


@pytest.fixture(scope="module")
def acpx() -> Acpx:
    return install_acpx()


def agent_command_line() -> str:
    """`coder-agent acp` from this interpreter's environment (else `python -m coder_agent acp`), quoted for acpx."""
    script = Path(sys.executable).with_name("coder-agent")
    argv = [str(script)] if script.is_file() else [sys.executable, "-m", "coder_agent"]
    return shlex.join([*argv, "acp"])


@dataclass
class AcpxRun:
    returncode: int | None  # None: killed after RUN_TIMEOUT
    transcript: Path
    stderr: Path
    messages: list[dict[str, Any]]

    def report(self) -> str:
        return (
            f"acpx exit code: {self.returncode}\n--- transcript ({self.transcript}) ---\n"
            f"{self.transcript.read_text(errors='replace')[-20000:]}\n"
            f"--- acpx and agent stderr ({self.stderr}) ---\n{self.stderr.read_text(errors='replace')[-6000:]}"
        )

    def requests(self, method: str) -> list[dict[str, Any]]:
        return [message for message in self.messages if message.get("method") == method and "id" in message]

    def calls(self, method: str) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        """Each request of `method` the agent sent, with acpx's answer (None if none came).

        The transcript does not say which side wrote a line, and both sides number their requests from 0 or 1;
        the answer to an agent's request is the next response with its id (the prompt's, with the same id,
        comes only at the end of the turn).
        """
        found = []
        for index, message in enumerate(self.messages):
            if message.get("method") == method and "id" in message:
                answers = (m for m in self.messages[index + 1 :] if m.get("id") == message["id"] and "method" not in m)
                found.append((message, next(answers, None)))
        return found

    def stop_reasons(self) -> list[str]:
        """What the agent answered to `session/prompt`: the results that carry a stop reason."""
        results = [message.get("result") for message in self.messages]
        return [result["stopReason"] for result in results if isinstance(result, dict) and "stopReason" in result]

    def tool_calls(self) -> list[dict[str, Any]]:
        """Every tool call as the client ends up seeing it: `tool_call` merged with its `tool_call_update`s."""
        merged: dict[str, dict[str, Any]] = {}
        for message in self.messages:
            update = message.get("params", {}).get("update", {}) if message.get("method") == "session/update" else {}
            if update.get("sessionUpdate") in ("tool_call", "tool_call_update"):
                merged.setdefault(update["toolCallId"], {}).update(update)
        return list(merged.values())


def run_acpx(acpx: Acpx, args: list[str], env: dict[str, str], project: Path, out: Path) -> AcpxRun:
    """Run acpx in its own process group, bounded by RUN_TIMEOUT; its stdout and stderr are kept in files."""
    transcript, stderr = out / "acpx-transcript.jsonl", out / "acpx-stderr.log"
    with open(transcript, "wb") as stdout_file, open(stderr, "wb") as stderr_file:
        proc = subprocess.Popen(
            acpx.command(*args),
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=stdout_file,
            stderr=stderr_file,
            start_new_session=True,
        )
        try:
            returncode: int | None = proc.wait(RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            returncode = None
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # acpx on timeout, and anything it left behind
            proc.wait()
    messages = []
    for line in transcript.read_text(errors="replace").splitlines():
        with contextlib.suppress(ValueError):
            message = json.loads(line)
            if isinstance(message, dict):
                messages.append(message)
    return AcpxRun(returncode, transcript, stderr, messages)


@contextlib.contextmanager
def explained(run: AcpxRun) -> Iterator[None]:
    """On a failed check: show the transcript and acpx's stderr, and where they are kept (the test's tmp_path)."""
    try:
        yield
    except Exception as exc:  # an assert, or an unpacking that found no or too many messages
        exc.add_note(run.report())
        raise


@pytest.mark.parametrize(
    ("flags", "through_client"),
    [pytest.param([], True, id="fs-and-terminal"), pytest.param(["--no-fs", "--no-terminal"], False, id="bare")],
)
def test_acpx_exec_gets_a_file_written_and_a_command_run(
    acpx: Acpx,
    srv: ScriptedModelServer,
    agent_env: EnvFactory,
    tmp_path: Path,
    flags: list[str],
    through_client: bool,
) -> None:
    srv.enqueue(
        Reply.tool_calls([tool_call("write_file", {"path": "hello.txt", "content": CONTENT})]),
        Reply.tool_calls([tool_call("run_command", {"command": COMMAND})]),
        Reply.text("Wrote ", "and ran."),
    )
    project, home = tmp_path / "project", tmp_path / "acpx-home"
    project.mkdir()
    home.mkdir()
    # acpx passes its environment on to the agent; HOME keeps acpx's own ~/.acpx config out of the test.
    env = {**base_env(), **agent_env(), "HOME": str(home)}
    args = [*flags, "--agent", agent_command_line(), "--cwd", str(project), "--approve-all", "--format", "json"]
    run = run_acpx(
        acpx, [*args, "--timeout", str(int(RUN_TIMEOUT - 10)), "exec", "write hello.txt"], env, project, tmp_path
    )

    with explained(run):
        assert run.returncode == 0
        [initialize] = run.requests("initialize")
        capabilities = initialize["params"]["clientCapabilities"]
        assert capabilities["terminal"] is through_client
        assert capabilities["fs"] == {"readTextFile": through_client, "writeTextFile": through_client}
        assert run.stop_reasons() == ["end_turn"]

        calls = run.tool_calls()
        # the write, then the command's own change (ran.txt) reported as an edit of its own
        edit, by_command = [call for call in calls if call.get("kind") == "edit"]
        [execute] = [call for call in calls if call.get("kind") == "execute"]
        assert edit["status"] == "completed"
        assert by_command["title"] == "Changed by run command: ran.txt" and by_command["status"] == "completed"
        assert execute["status"] == "completed"
        assert (project / "hello.txt").read_text() == CONTENT
        assert (project / "ran.txt").read_text() == CONTENT  # the command ran, in the project folder
        assert "ran" in srv.requests[2].body["messages"][-1]["content"]  # and the model read its output

        writes, terminals = run.calls("fs/write_text_file"), run.calls("terminal/create")
        if through_client:
            [(write, write_answer)] = writes
            assert write["params"]["content"] == CONTENT
            assert write_answer is not None and "result" in write_answer
            [(create, created)] = terminals
            assert create["params"]["args"] == ["-c", COMMAND]
            assert created is not None and "result" in created
            [(release, released)] = run.calls("terminal/release")
            assert release["params"]["terminalId"] == created["result"]["terminalId"]
            assert released is not None and "result" in released
        else:
            assert writes == [] and terminals == []
