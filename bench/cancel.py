"""`session/cancel` -> `stopReason: "cancelled"` while `run_command` runs, and whether the command is left behind.

The real agent (`python -m coder_agent acp`, mode `bypass`, started by the eval harness's launcher, as the
evals and the tests start it) talks to the scripted model server (run as `python -m coder_agent.scripted`),
whose every reply is a `run_command` of `sleep 30.NNNN` (NNNN marks this run).
Each iteration sends `session/prompt`, waits for the call's `tool_call_update` with status `in_progress`, sends
`session/cancel`, and times the prompt's reply. Then it counts the `sleep` processes still alive (from
/proc). Two client profiles:

- `bare`: no capabilities; the agent runs the command itself (`/bin/sh -c`, its own process group).
- `terminal`: advertises `terminal: true`; this script serves `terminal/*` with the agent's own local terminals
  (`coder_agent.local.terminals`), and answers a request the agent withdraws with `$/cancel_request` with
  error -32800.

Prints p50 / p90 / p99 / max per profile (target p99 <= 150 ms), the leftover processes (a process counts
while it is neither a zombie nor already exiting or SIGKILLed), and with `--trace` the median time after the
cancel at which each message of the cancel cascade arrived. The machine's process count is printed too: the
agent's local kill scans /proc, so it costs more where many processes run.

    python bench/cancel.py [--runs N] [--profile bare|terminal|both] [--delay S] [--create-latency S] [--trace]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import math
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.abc
import anyio.from_thread
import client  # noqa: F401  (bench/client.py puts this checkout first on sys.path)

from coder_agent.acp.lines import read_lines
from coder_agent.acp.schema import TerminalExitStatus
from coder_agent.agent.errors import ClientError
from coder_agent.local.terminals import LocalTerminals
from coder_agent.scripted.script import Reply, Script, tool_call
from evals.harness.agent_process import AgentPipes, start_agent
from evals.harness.config import python_env
from evals.harness.wire import WireLog

TARGET_P99_MS = 150.0
WAIT = 60.0  # seconds any single wait may take (the first prompt imports litellm)
OFFLINE = {  # litellm must not reach the internet
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS": "True",
    "HF_HUB_OFFLINE": "1",
}
CANCELLED = -32800
T = TypeVar("T")


PF_EXITING = 0x4  # /proc/PID/stat flags: the process has begun to exit
SIGKILL_BIT = 1 << (signal.SIGKILL - 1)


def _dying(stat_fields: list[bytes], status: bytes) -> bool:
    """A zombie, a process already exiting, or one with SIGKILL pending: it no longer runs the command."""
    if stat_fields[0] in (b"Z", b"X") or int(stat_fields[6]) & PF_EXITING:
        return True
    for line in status.splitlines():
        if line.startswith((b"SigPnd:", b"ShdPnd:")) and int(line.split()[1], 16) & SIGKILL_BIT:
            return True
    return False


def marker_processes(marker: str) -> list[int]:
    """Processes whose command line holds `marker` and that still run (not zombies, not being killed)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").decode(errors="replace")
            if marker not in cmdline:
                continue
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            with open(f"/proc/{entry}/status", "rb") as handle:
                status = handle.read()
        except (OSError, IndexError):
            continue
        if not _dying(fields, status):
            found.append(int(entry))
    return found


async def _local_terminals(*, task_status: anyio.abc.TaskStatus[LocalTerminals]) -> None:
    async with anyio.create_task_group() as tasks:
        task_status.started(LocalTerminals(tasks, environment=os.environ))
        await anyio.sleep_forever()


class Terminals:
    """The editor's side of `terminal/*`: the agent's own local terminals (each command a process group of its
    own), on an event loop in a thread of their own. An unknown terminal raises KeyError."""

    def __init__(self) -> None:
        self._portal_cm = anyio.from_thread.start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        self._loop, self._terminals = self._portal.start_task(_local_terminals)
        self._ids: dict[str, str] = {}  # ours -> the local terminal's
        self._count = itertools.count(1)

    def _call(self, method: Callable[..., Awaitable[T]], terminal_id: str) -> T:
        try:
            return self._portal.call(method, "", self._ids[terminal_id])
        except ClientError as exc:
            raise KeyError(terminal_id) from exc

    def create(self, params: dict[str, Any]) -> dict[str, Any]:
        env = {item["name"]: item["value"] for item in params.get("env") or []}
        local = self._portal.call(
            self._terminals.create_terminal, "", params["command"], params.get("args", []), params.get("cwd"), env
        )
        terminal_id = f"term_{next(self._count)}"
        self._ids[terminal_id] = local
        return {"terminalId": terminal_id}

    @staticmethod
    def _status(status: TerminalExitStatus) -> dict[str, Any]:
        return {"exitCode": status.exit_code, "signal": status.signal}

    def output(self, params: dict[str, Any]) -> dict[str, Any]:
        result = self._call(self._terminals.terminal_output, params["terminalId"])
        answer: dict[str, Any] = {"output": result.output, "truncated": result.truncated}
        if result.exit_status is not None:
            answer["exitStatus"] = self._status(result.exit_status)
        return answer

    def wait_for_exit(self, params: dict[str, Any]) -> dict[str, Any]:
        return self._status(self._call(self._terminals.wait_for_terminal_exit, params["terminalId"]))

    def kill(self, params: dict[str, Any]) -> dict[str, Any]:
        self._call(self._terminals.kill_terminal, params["terminalId"])
        return {}

    def release(self, params: dict[str, Any]) -> dict[str, Any]:
        self._call(self._terminals.release_terminal, params["terminalId"])
        self._ids.pop(params["terminalId"])
        return {}

    def close(self) -> None:
        self._portal.call(self._terminals.release_all)
        self._loop.cancel()
        self._portal_cm.__exit__(None, None, None)


@dataclass
class Received:
    at: float  # time.perf_counter() when the line was read
    message: dict[str, Any]


@dataclass
class Driver:
    """The client end of the agent's pipes (the eval harness's launcher): writes whole lines, times each line
    it reads, and serves the agent's requests itself, so it can answer late or ignore a `$/cancel_request`."""

    pipes: AgentPipes
    tasks: anyio.abc.TaskGroup
    terminals: Terminals | None
    create_latency: float = 0.0  # seconds between starting a terminal's command and answering terminal/create
    served: list[Received] = field(default_factory=list)  # the agent's requests and notifications, with times
    _waits: dict[Any, bool] = field(default_factory=dict)  # wait_for_exit id -> answered already
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _write_lock: anyio.Lock = field(default_factory=anyio.Lock)

    def __post_init__(self) -> None:
        self._inbox_in, self._inbox = anyio.create_memory_object_stream[Received](math.inf)

    async def send(self, message: dict[str, Any]) -> float:
        data = json.dumps(message, separators=(",", ":")).encode() + b"\n"
        async with self._write_lock:
            sent = time.perf_counter()
            await self.pipes.stdin.send(data)
        return sent

    async def request(self, method: str, params: dict[str, Any]) -> tuple[int, float]:
        request_id = next(self._ids)
        return request_id, await self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})

    async def receive(self, timeout: float = WAIT) -> Received:
        with anyio.fail_after(timeout):
            return await self._inbox.receive()

    async def reply_to(self, request_id: int, timeout: float = WAIT) -> Received:
        with anyio.fail_after(timeout):
            while True:
                got = await self.receive(timeout)
                if got.message.get("id") == request_id and "method" not in got.message:
                    return got

    async def read(self) -> None:
        async for line in read_lines(self.pipes.stdout, 2**30):
            assert isinstance(line, bytes)
            got = Received(time.perf_counter(), json.loads(line))
            method = got.message.get("method")
            if method is not None and ("id" in got.message or method == "$/cancel_request"):
                self.served.append(got)
                await self._serve(got.message)
            else:
                self._inbox_in.send_nowait(got)

    async def _answer(self, request_id: Any, result: Any = None, error: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
        message.update({"error": error} if error is not None else {"result": result})
        await self.send(message)

    async def _answer_later(self, delay: float, request_id: Any, result: Any) -> None:
        await anyio.sleep(delay)
        await self._answer(request_id, result)

    async def _serve(self, message: dict[str, Any]) -> None:
        method, params, request_id = message["method"], message.get("params") or {}, message.get("id")
        if method == "$/cancel_request":
            if self._waits.get(params.get("requestId")) is False:
                self._waits[params["requestId"]] = True
                await self._answer(params["requestId"], error={"code": CANCELLED, "message": "Request cancelled"})
            return
        handlers = {
            "terminal/create": "create",
            "terminal/output": "output",
            "terminal/kill": "kill",
            "terminal/release": "release",
        }
        if self.terminals is not None and method == "terminal/create" and self.create_latency:
            created = self.terminals.create(params)  # the command starts now; the answer comes late
            self.tasks.start_soon(self._answer_later, self.create_latency, request_id, created)
        elif self.terminals is not None and method == "terminal/wait_for_exit":
            self._waits[request_id] = False
            self.tasks.start_soon(self._wait_for_exit, request_id, params)
        elif self.terminals is not None and method in handlers:
            try:
                await self._answer(request_id, getattr(self.terminals, handlers[method])(params))
            except KeyError:
                await self._answer(request_id, error={"code": -32602, "message": "unknown terminal"})
        elif method == "session/request_permission":
            await self._answer(request_id, {"outcome": {"outcome": "cancelled"}})
        else:
            await self._answer(request_id, error={"code": -32601, "message": f"Method not found: {method}"})

    async def _wait_for_exit(self, request_id: Any, params: dict[str, Any]) -> None:
        assert self.terminals is not None
        try:
            result = await anyio.to_thread.run_sync(self.terminals.wait_for_exit, params, abandon_on_cancel=True)
            error = None
        except KeyError:
            result, error = None, {"code": -32602, "message": "unknown terminal"}
        if self._waits.pop(request_id, True):
            return  # cancelled and answered already
        await self._answer(request_id, result, error)


def label(received: Received, call_id: str | None) -> str:
    message = received.message
    method = message.get("method")
    if method == "session/update":
        update = message["params"]["update"]
        kind = update["sessionUpdate"]
        if kind == "tool_call_update" and update.get("toolCallId") == call_id:
            return f"tool_call_update {update.get('status', '(content)')}"
        return kind
    if method is not None:
        return method
    return "prompt reply" if "stopReason" in (message.get("result") or {}) else f"reply to {message.get('id')}"


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[max(math.ceil(p / 100 * len(ordered)) - 1, 0)]


@dataclass
class Iteration:
    cancel_ms: float
    left_at_reply: int
    left_after_grace: int
    trace: list[tuple[str, float]]


async def one_prompt(driver: Driver, session_id: str, marker: str, delay: float, grace: float) -> Iteration:
    served_before = len(driver.served)
    prompt = [{"type": "text", "text": "run it"}]
    prompt_id, _ = await driver.request("session/prompt", {"sessionId": session_id, "prompt": prompt})
    call_id = None
    while True:  # until the run_command call is in progress
        message = (await driver.receive()).message
        if message.get("id") == prompt_id:
            raise RuntimeError(f"the prompt ended before the command ran: {message}")
        update = message.get("params", {}).get("update", {}) if message.get("method") == "session/update" else {}
        if update.get("sessionUpdate") == "tool_call" and update.get("kind") == "execute":
            call_id = update["toolCallId"]
        if update.get("toolCallId") == call_id and update.get("status") == "in_progress":
            break
    if delay:
        await anyio.sleep(delay)
    cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session_id}}
    cancelled_at = await driver.send(cancel)
    after: list[Received] = []
    while True:
        got = await driver.receive()
        after.append(got)
        if got.message.get("id") == prompt_id and "method" not in got.message:
            break
    reply = after[-1]
    if reply.message.get("result") != {"stopReason": "cancelled"}:
        raise RuntimeError(f"expected stopReason cancelled, got {reply.message}")
    left_at_reply = len(marker_processes(marker))
    left = left_at_reply
    deadline = time.monotonic() + grace
    while left and time.monotonic() < deadline:
        await anyio.sleep(0.02)
        left = len(marker_processes(marker))
    for pid in marker_processes(marker):  # a leftover must not leak into the next iteration's count
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    events = [got for got in after + driver.served[served_before:] if got.at >= cancelled_at]
    trace = sorted(((label(got, call_id), (got.at - cancelled_at) * 1000) for got in events), key=lambda x: x[1])
    return Iteration((reply.at - cancelled_at) * 1000, left_at_reply, left, trace)


def start_model(script: Script, folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    path = folder / "script.json"
    script.save(path)
    command = [sys.executable, "-m", "coder_agent.scripted", "--script", str(path)]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=dict(os.environ))
    assert server.stdout is not None
    url = server.stdout.readline().decode().strip()
    if not url.startswith("http"):
        server.kill()
        raise RuntimeError("the scripted model server did not print its URL")
    return server, url


async def run_profile(name: str, args: argparse.Namespace, url: str, marker: str, folder: Path) -> list[Iteration]:
    home, project = folder / f"home-{name}", folder / f"project-{name}"
    project.mkdir()
    env = {
        **os.environ,
        **OFFLINE,
        "CODER_AGENT_MODEL": "openai/scripted",
        "CODER_AGENT_API_BASE": url,
        "CODER_AGENT_API_KEY": "sk-test",
        "CODER_AGENT_HOME": str(home),
        "CODER_AGENT_DEFAULT_MODE": "bypass",
        "CODER_AGENT_LOG_LEVEL": args.log_level,
    }
    terminals = Terminals() if name == "terminal" else None
    launch = start_agent(
        WireLog(check=False), env=python_env(env), cwd=project, stderr_path=folder / f"agent-{name}.log"
    )
    try:
        async with launch as pipes, anyio.create_task_group() as tasks:
            driver = Driver(pipes, tasks, terminals, args.create_latency)
            tasks.start_soon(driver.read)
            capabilities = {"terminal": True} if terminals is not None else {}
            init_id, _ = await driver.request("initialize", {"protocolVersion": 1, "clientCapabilities": capabilities})
            await driver.reply_to(init_id)
            new_id, _ = await driver.request("session/new", {"cwd": str(project), "mcpServers": []})
            session_id = (await driver.reply_to(new_id)).message["result"]["sessionId"]
            for _ in range(args.warmup):  # the first prompt waits for litellm to import
                await one_prompt(driver, session_id, marker, args.delay, args.grace)
            results = []
            for index in range(args.runs):
                results.append(await one_prompt(driver, session_id, marker, args.delay, args.grace))
                print(f"\r{name}: {index + 1}/{args.runs}", end="", file=sys.stderr, flush=True)
            print(file=sys.stderr)
            await pipes.stop()  # stdin EOF: the agent exits, and the reader with it
            tasks.cancel_scope.cancel()
            return results
    finally:
        if terminals is not None:
            terminals.close()


def report(name: str, results: list[Iteration], show_trace: bool) -> None:
    times = [result.cancel_ms for result in results]
    p99 = percentile(times, 99)
    verdict = "ok" if p99 <= TARGET_P99_MS else "MISSED"
    print(
        f"{name:9} n={len(times):3}  p50 {percentile(times, 50):6.1f}  p90 {percentile(times, 90):6.1f}  "
        f"p99 {p99:6.1f}  max {max(times):6.1f} ms   target p99 <= {TARGET_P99_MS:.0f} ms: {verdict}"
    )
    at_reply = sum(result.left_at_reply for result in results)
    after = sum(result.left_after_grace for result in results)
    iterations = sum(1 for result in results if result.left_after_grace)
    print(
        f"{'':9} sleep processes alive at the reply: {at_reply}; still alive after the grace: {after} "
        f"(in {iterations} of {len(results)} iterations)"
    )
    if show_trace:
        offsets: dict[str, list[float]] = defaultdict(list)
        for result in results:
            for event, offset in result.trace:
                offsets[event].append(offset)
        print(f"{'':9} cancel cascade (median ms after session/cancel was written; count):")
        for event, values in sorted(offsets.items(), key=lambda item: statistics.median(item[1])):
            print(f"{'':11} {statistics.median(values):7.1f}  {event}  ({len(values)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=40, help="timed iterations per profile (default 40)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed iterations first (default 2)")
    parser.add_argument("--profile", choices=["bare", "terminal", "both"], default="both")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds between in_progress and the cancel")
    parser.add_argument(
        "--create-latency",
        type=float,
        default=0.0,
        help="terminal profile: seconds before terminal/create is answered (the command starts at once; a "
        "$/cancel_request for it is ignored, as by a client that does not support it)",
    )
    parser.add_argument("--grace", type=float, default=2.0, help="seconds a leftover process may take to die")
    parser.add_argument("--trace", action="store_true", help="print when each message of the cancel arrived")
    parser.add_argument("--log-level", default="WARNING", help="the agent's CODER_AGENT_LOG_LEVEL")
    parser.add_argument("--keep", action="store_true", help="keep the temp folder (agent logs) and print it")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")

    marker = f"sleep 30.{random.randrange(1000, 10000)}"
    script = Script(default=Reply.tool_calls([tool_call("run_command", {"command": marker})]))
    profiles = ["bare", "terminal"] if args.profile == "both" else [args.profile]
    folder = Path(tempfile.mkdtemp(prefix="bench-cancel-"))
    server, url = start_model(script, folder)
    try:
        results = {name: anyio.run(run_profile, name, args, url, marker, folder) for name in profiles}
    finally:
        server.terminate()
        server.wait(10)
        if args.keep:
            print(f"agent logs in {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
    processes = sum(1 for entry in os.listdir("/proc") if entry.isdigit())
    print(f"session/cancel -> stopReason cancelled, while `{marker}` runs (bypass mode; {args.runs} runs)")
    print(f"machine: {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}, {processes} processes")
    for name in profiles:
        report(name, results[name], args.trace)
    print(f"sleep processes alive at exit: {len(marker_processes(marker))}")


if __name__ == "__main__":
    main()
