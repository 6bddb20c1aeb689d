"""Where a trial's agent, its commands and its verifier run: on this machine (`local`) or in a container (`docker`).

The harness is the ACP client either way (schema check on every line, modes, limits, profiles, permission
policies): only the ends move. With `docker`, each trial gets its own container (see `docker.py`):

- the agent is `docker exec -i CONTAINER /opt/coder-agent/bin/coder-agent acp`: the harness speaks ACP over the
  exec's stdio, as an editor does over a local process's, and closing its stdin ends the agent as it would;
- the editor profile's terminals are `docker exec`s in the same container (a kill goes in by process group);
  its files are served from the bind-mounted workspace, which has the same path on both sides;
- the verifier runs in the container after the agent, with the same variables (`EVAL_*`) as locally, so a task
  that installs system packages, or an agent that breaks the system, is judged where it happened;
- the offline model server listens on docker's bridge address, which the container reaches.

Only the variables a model provider or the agent reads cross into the container (`CODER_AGENT_*`, `LITELLM_*`,
`*_API_KEY`, `*_API_BASE`, `*_BASE_URL`, ..., and the names in `EVALS_DOCKER_ENV`), by name: their values go to
the docker client's environment, never its command line.
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

import anyio
import anyio.abc

from . import docker
from .agent_process import agent_command
from .docker import AGENT_BIN, AgentImage, Container
from .procs import ProcResult, run
from .task import Task
from .terminals import TerminalService

SandboxKind = Literal["local", "docker"]
LOOPBACK = "127.0.0.1"

_PASSED = re.compile(
    r"^(CODER_AGENT_|LITELLM_|AWS_|AZURE_|VERTEX|OLLAMA_)|"
    r"(_API_KEY|_API_BASE|_BASE_URL|_API_VERSION|_API_TOKEN|_AUTH_TOKEN)$|^HF_HUB_OFFLINE$"
)


def container_env_names(env: Mapping[str, str]) -> list[str]:
    """The variables of `env` that go into the container (see the module docstring)."""
    extra = {name.strip() for name in os.environ.get("EVALS_DOCKER_ENV", "").split(",") if name.strip()}
    return sorted(name for name in env if _PASSED.search(name) or name in extra)


class Sandbox(Protocol):
    """What a trial needs of the place it runs in."""

    @property
    def model_host(self) -> str:
        """The address an offline model server listens on, for the agent to reach it."""

    def agent_launch(self, env: Mapping[str, str], workspace: Path) -> tuple[list[str], dict[str, str]]:
        """The command that starts `coder-agent acp` with `env`, and the environment of that local process."""

    def terminals(self, workspace: Path, env: Mapping[str, str], tasks: anyio.abc.TaskGroup) -> TerminalService:
        """The editor profile's `terminal/*`."""

    async def run(
        self, command: str, *, cwd: Path, env: Mapping[str, str], timeout: float, log_path: Path | None = None
    ) -> ProcResult:
        """A verifier's command (`/bin/sh -c`), killed with everything it started after `timeout`."""


class LocalSandbox:
    model_host = LOOPBACK

    def agent_launch(self, env: Mapping[str, str], workspace: Path) -> tuple[list[str], dict[str, str]]:
        return agent_command(), dict(env)

    def terminals(self, workspace: Path, env: Mapping[str, str], tasks: anyio.abc.TaskGroup) -> TerminalService:
        return TerminalService(workspace, env, tasks)

    async def run(
        self, command: str, *, cwd: Path, env: Mapping[str, str], timeout: float, log_path: Path | None = None
    ) -> ProcResult:
        return await run(command, cwd=cwd, env=env, timeout=timeout, log_path=log_path)


class ContainerCommands:
    """Commands (terminals, verifiers) as `docker exec`s in one container, each killable as a group."""

    def __init__(self, container: Container) -> None:
        self.container = container

    def wrap(
        self, command: str, args: Sequence[str], cwd: str, env: Mapping[str, str]
    ) -> tuple[str, list[str], dict[str, str], str]:
        """(local command, its args, its environment, the pid file naming its group in the container)."""
        argv, pid_file = self.container.exec_argv([command, *args], cwd=cwd, env_names=sorted(env))
        return argv[0], argv[1:], {**os.environ, **env}, pid_file

    async def kill(self, pid_file: str) -> None:
        await anyio.to_thread.run_sync(self.container.kill_group, pid_file)


@dataclass
class DockerSandbox:
    container: Container
    gateway: str

    @property
    def model_host(self) -> str:
        return self.gateway

    def agent_launch(self, env: Mapping[str, str], workspace: Path) -> tuple[list[str], dict[str, str]]:
        names = container_env_names(env)
        passed = {name: env[name] for name in names}
        passed["HOME"] = env.get("CODER_AGENT_HOME", str(workspace))  # the uid has no home in the image
        argv, _ = self.container.exec_argv([AGENT_BIN, "acp"], cwd=workspace, env_names=sorted(passed), stdin=True)
        return argv, {**os.environ, **passed}

    def terminals(self, workspace: Path, env: Mapping[str, str], tasks: anyio.abc.TaskGroup) -> TerminalService:
        return TerminalService(workspace, env, tasks, ContainerCommands(self.container))

    async def run(
        self, command: str, *, cwd: Path, env: Mapping[str, str], timeout: float, log_path: Path | None = None
    ) -> ProcResult:
        passed = {name: value for name, value in env.items() if name.startswith("EVAL_")}
        passed["PYTHONDONTWRITEBYTECODE"] = "1"
        passed["HOME"] = str(cwd)
        argv, pid_file = self.container.exec_argv(["/bin/sh", "-c", command], cwd=cwd, env_names=sorted(passed))
        try:
            return await run(argv, cwd=cwd, env={**os.environ, **passed}, timeout=timeout, log_path=log_path)
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(self.container.kill_group, pid_file)


@asynccontextmanager
async def docker_sandbox(image: str, gateway: str, task: Task, trial_dir: Path) -> AsyncIterator[DockerSandbox]:
    """A container of `image` for one trial, removed (with everything running in it) when the block ends."""
    mounts = [(trial_dir, True), (task.workspace_dir.resolve(), False)]
    workspace = trial_dir / "workspace"
    container = await anyio.to_thread.run_sync(Container.start, image, mounts, workspace, f"{task.id}")
    try:
        yield DockerSandbox(container, gateway)
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(container.remove)


@dataclass
class SandboxPlan:
    """A run's sandbox, decided once before its trials: for docker, each task's image (built) and the bridge."""

    kind: SandboxKind = "local"
    images: dict[str, AgentImage] = field(default_factory=dict)  # task id -> the image its trials run in
    gateway: str = LOOPBACK

    @asynccontextmanager
    async def open(self, task: Task, trial_dir: Path) -> AsyncIterator[Sandbox]:
        if self.kind == "local":
            yield LocalSandbox()
            return
        async with docker_sandbox(self.images[task.id].tag, self.gateway, task, trial_dir) as sandbox:
            yield sandbox


def plan_docker(tasks: Sequence[Task], base_image: str | None, log_dir: Path) -> SandboxPlan:
    """Build (or find) every image the tasks' trials run in; blocking (minutes the first time, then cached)."""
    reason = docker.unavailable_reason()
    if reason is not None:
        raise docker.DockerError(f"--sandbox docker: {reason}")
    by_environment: dict[str, AgentImage] = {}
    images: dict[str, AgentImage] = {}
    log = log_dir / "docker-build.log"
    for task in tasks:
        environment = docker.environment_image(task.environment_dir, base_image or docker.BASE_IMAGE, log)
        if environment not in by_environment:
            by_environment[environment] = docker.agent_image(environment, log)
        images[task.id] = by_environment[environment]
    return SandboxPlan("docker", images, docker.bridge_gateway())
