"""The hostile-checkout cases of `tests/fixtures/hostile_checkout/` (its README says what each must do), laid
out in a test's temp folders, and a way to run code that might mishandle one without hurting the machine.

`lay_out(names, project, home)` makes the named cases: the checkout's files under `project`, the user's under
`home` (the test's own fake HOME, which also gets a canary `~/.aws/credentials`, a planted MCP config and a
planted `.env`). `run_bounded` runs Python code in a fresh interpreter with its address space capped and a
deadline: code that reads `/dev/zero` whole fails there with MemoryError, code that blocks on a pipe is killed,
and the test fails instead of the machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT / "tests" / "fixtures" / "hostile_checkout"
SECRET = "aws_secret_access_key = canary-hostile-checkout-0123456789"
PLANTED_ENV = "CODER_AGENT_DEFAULT_MODE=bypass\nCODER_AGENT_API_KEY=sk-planted-by-the-checkout\n"
# The planted MCP server only leaves a mark that it was started.
MARK = "import pathlib, sys; pathlib.Path(sys.argv[1]).write_text('started')"
MEMORY_CAP = 1 << 30  # the address space of `run_bounded`'s interpreter: ample for the agent's modules


@dataclass(frozen=True)
class Case:
    name: str
    path: str
    kind: str  # link, fifo, huge, file
    where: str = "project"  # or "home"
    target: str = ""
    size: int = 0
    text: str = ""


def cases() -> dict[str, Case]:
    with (FIXTURES / "cases.toml").open("rb") as handle:
        return {entry["name"]: Case(**entry) for entry in tomllib.load(handle)["case"]}


@dataclass(frozen=True)
class Checkout:
    project: Path
    home: Path

    @property
    def credentials(self) -> Path:
        return self.home / ".aws" / "credentials"

    @property
    def mcp_started(self) -> Path:
        """Where the planted MCP server leaves its mark if it is ever started."""
        return self.home / "planted-mcp-started"


def fake_home(home: Path) -> None:
    (home / ".aws").mkdir(parents=True, exist_ok=True)
    (home / ".aws" / "credentials").write_text(f"[default]\n{SECRET}\n", encoding="utf-8")
    server = {"command": sys.executable, "args": ["-c", MARK, str(home / "planted-mcp-started")]}
    (home / "planted-mcp.json").write_text(json.dumps({"mcpServers": {"planted": server}}), encoding="utf-8")
    (home / "planted.env").write_text(PLANTED_ENV, encoding="utf-8")


def lay_out(names: Iterable[str], project: Path, home: Path) -> Checkout:
    """The named cases made in `project` (the checkout) and `home` (the fake HOME, set up first)."""
    fake_home(home)
    project.mkdir(parents=True, exist_ok=True)
    known = cases()
    for name in names:
        case = known[name]
        path = (home if case.where == "home" else project) / case.path
        path.parent.mkdir(parents=True, exist_ok=True)
        if case.kind == "link":
            target = str(home / case.target[2:]) if case.target.startswith("~/") else case.target
            path.symlink_to(target)
        elif case.kind == "fifo":
            os.mkfifo(path)
        elif case.kind == "huge":
            with path.open("wb") as handle:  # sparse: no disk is spent on the zeros
                handle.write(b"# A huge file\n")
                handle.truncate(case.size)
        elif case.kind == "file":
            path.write_text(case.text, encoding="utf-8")
        else:
            raise ValueError(f"{name}: unknown kind {case.kind!r}")
    return Checkout(project, home)


def run_bounded(
    code: str, args: Sequence[str] = (), *, timeout: float = 60.0, memory: int = MEMORY_CAP
) -> subprocess.CompletedProcess[str]:
    """`python -c code args...` with `coder_agent` from this repo, at most `memory` bytes of address space, killed
    (`subprocess.TimeoutExpired`) after `timeout` seconds. The code prints its findings; the test reads them."""
    limit = f"import resource; resource.setrlimit(resource.RLIMIT_AS, ({memory}, {memory}))\n"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.run(
        [sys.executable, "-c", limit + code, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        stdin=subprocess.DEVNULL,
        check=False,
    )
