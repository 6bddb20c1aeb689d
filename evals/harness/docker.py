"""Docker for `--sandbox docker`: is it there, the images a run needs, one container per trial.

Everything goes through the `docker` command line (no SDK: the CLI is what users have, and what
`evals/docker/setup.sh` installs). Images:

- the task's environment: built from the task's `environment/Dockerfile` when it has one, else the base image
  (`coder-agent-evals-base:trixie`, built by `evals/docker/setup.sh` without pulling; `--image` names another);
- the agent's layer over it: a virtualenv at `/opt/coder-agent` with this checkout's wheel, its dependencies in
  a layer of their own (so a change to the agent rebuilds seconds, not the dependencies' minute). Tagged by a
  hash of what went in, so a second run reuses it.

A trial's container runs `sleep infinity` under docker's init (which reaps what the agent leaves), as the
caller's uid, with the trial folder and the task's untouched workspace bind-mounted at the paths they have
here: the paths in the ACP session, the verifier's variables and the editor profile's files are the same
inside and out, and nothing else of this machine is visible to the model's commands.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .config import REPO_ROOT

BASE_IMAGE = "coder-agent-evals-base:trixie"
AGENT_PREFIX = "/opt/coder-agent"
AGENT_BIN = f"{AGENT_PREFIX}/bin/coder-agent"
LABEL = "coder-agent-evals"
SETUP_HINT = "run `bash evals/docker/setup.sh` as root (it installs docker, starts dockerd and builds the base image)"
_QUERY_TIMEOUT = 60.0
_BUILD_TIMEOUT = 1800.0
_WHEELS_KEPT = 8

# A command in the container, in a session of its own whose id is written to a file first (`setsid -w` waits
# for it and gives its exit code): `docker exec` does not pass a kill on, so a kill goes in by that id. When the
# command ends, what it left in its group (background jobs) is ended too, as the local terminals do.
_IN_GROUP = 'echo $$ >"$0"; "$@"; s=$?; trap "" TERM; kill -TERM -$$ 2>/dev/null; exit $s'


class DockerError(RuntimeError):
    """Docker is missing, not running, or a docker command failed; the message says which and what to do."""


def _docker(*args: str, timeout: float = _QUERY_TIMEOUT, input: bytes | None = None) -> str:
    if shutil.which("docker") is None:
        raise DockerError(f"docker is not installed: {SETUP_HINT}")
    try:
        done = subprocess.run(
            ["docker", *args], capture_output=True, timeout=timeout, check=False, input=input, stdin=None
        )
    except subprocess.TimeoutExpired as exc:
        raise DockerError(f"docker {args[0]} did not finish in {timeout:g} s") from exc
    if done.returncode != 0:
        detail = done.stderr.decode(errors="replace").strip()[-2000:]
        raise DockerError(f"docker {' '.join(args[:2])} failed: {detail}")
    return done.stdout.decode(errors="replace")


def unavailable_reason() -> str | None:
    """Why `--sandbox docker` cannot run here (None: it can): no docker, or no daemon answering."""
    if shutil.which("docker") is None:
        return f"docker is not installed: {SETUP_HINT}"
    try:
        _docker("version", "--format", "{{.Server.Version}}", timeout=20)
    except DockerError as exc:
        return f"the docker daemon does not answer ({exc}): {SETUP_HINT}"
    return None


def image_exists(image: str) -> bool:
    try:
        _docker("image", "inspect", "--format", "{{.Id}}", image)
    except DockerError:
        return False
    return True


def image_id(image: str) -> str:
    return _docker("image", "inspect", "--format", "{{.Id}}", image).strip()


def server_version() -> str:
    return _docker("version", "--format", "{{.Server.Version}}").strip()


def bridge_gateway() -> str:
    """The host's address on docker's default bridge: where a container reaches a server of the harness's."""
    text = _docker("network", "inspect", "bridge", "--format", "{{range .IPAM.Config}}{{.Gateway}} {{end}}")
    for address in text.split():
        if address.count(".") == 3:
            return address
    raise DockerError(f"docker's bridge network has no IPv4 gateway ({text.strip()!r})")


def _build(tag: str, context: Path, log: Path | None, dockerfile: Path | None = None) -> None:
    args = ["build", "--quiet", "--label", LABEL, "-t", tag]
    if dockerfile is not None:
        args += ["-f", str(dockerfile)]
    try:
        _docker(*args, str(context), timeout=_BUILD_TIMEOUT)
    except DockerError as exc:
        if log is not None:
            log.write_text(str(exc) + "\n", encoding="utf-8")
        raise DockerError(f"building {tag} from {context} failed: {str(exc)[-1500:]}") from exc


def environment_image(environment: Path | None, base_image: str, log: Path | None = None) -> str:
    """The task's environment image: built from `environment/` (a Dockerfile in it), or the base image."""
    if environment is None:
        if not image_exists(base_image):
            raise DockerError(f"there is no image {base_image}: {SETUP_HINT}")
        return base_image
    tag = f"coder-agent-evals-env:{_tree_digest([environment], environment)[:16]}"
    if not image_exists(tag):
        _build(tag, environment, log)
    return tag


def _requirements() -> list[str]:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return list(project["dependencies"])


def build_wheel(folder: Path, project: Path = REPO_ROOT) -> Path:
    """`project` (this checkout) as a wheel in `folder` (no dependencies: they go in a layer of their own)."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(folder), str(project)],
        capture_output=True,
        timeout=600,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    wheels = sorted(folder.glob("*.whl"))
    if done.returncode != 0 or not wheels:
        raise DockerError(f"could not build the agent's wheel: {done.stderr.decode(errors='replace')[-1500:]}")
    return wheels[-1]


def _wheel_sources(project: Path) -> list[Path]:
    """What hatchling makes the wheel of: pyproject.toml's wheel target (its packages and force-included paths),
    the readme, the license files, and pyproject.toml itself."""
    pyproject = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))
    target = pyproject.get("tool", {}).get("hatch", {}).get("build", {}).get("targets", {}).get("wheel", {})
    packages = target.get("packages")
    if not packages:  # hatchling would guess them; a cache keyed on a guess could hand out a stale wheel
        raise DockerError(f"{project / 'pyproject.toml'}: [tool.hatch.build.targets.wheel] names no packages")
    readme = pyproject.get("project", {}).get("readme")
    named = [*packages, *target.get("force-include", {}), *([readme] if isinstance(readme, str) else [])]
    licenses = [p for p in project.iterdir() if p.name.startswith(("LICEN", "COPYING", "NOTICE", "AUTHORS"))]
    return [project / "pyproject.toml", *(project / name for name in named), *licenses]


def _tree_digest(paths: Sequence[Path], root: Path) -> str:
    digest = hashlib.sha256()
    files = {p for path in paths for p in ([path] if path.is_file() else path.rglob("*")) if p.is_file()}
    for path in sorted(files):
        if "__pycache__" in path.parts or path.suffix == ".pyc":
            continue
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def agent_wheel(project: Path = REPO_ROOT) -> Path:
    """This checkout's wheel, built once per state of its sources and kept in the cache: the runs, test workers
    and CI's image step that need it in turn take the same file (a `pip wheel` costs seconds of CPU each)."""
    folder = _cache_root() / f"wheel-{_tree_digest(_wheel_sources(project), project)[:16]}"
    with (folder.parent / f"{folder.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if folder.is_dir():
            return next(folder.glob("*.whl"))
        partial = folder.with_name(folder.name + ".part")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir()
        wheel = build_wheel(partial, project)
        partial.rename(folder)
    # Keep the newest few (a run may still be using the one before): each source change adds one.
    built = [p for p in _cache_root().glob("wheel-*") if p.is_dir() and not p.name.endswith(".part")]
    for old in sorted(built, key=lambda p: p.stat().st_mtime)[:-_WHEELS_KEPT]:
        shutil.rmtree(old, ignore_errors=True)
        old.with_name(f"{old.name}.lock").unlink(missing_ok=True)
    return folder / wheel.name


def cache_dir() -> Path:
    """Where the harness keeps what it builds for docker (wheelhouses): EVALS_CACHE, else ~/.cache."""
    configured = os.environ.get("EVALS_CACHE")
    if configured:
        return Path(configured)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "coder-agent-evals"


def _cache_root() -> Path:
    root = cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    return root


def _wheelhouse_folder(image_ref: str) -> tuple[Path, str]:
    """(the wheelhouse's folder for the image with id `image_ref`, the requirements it holds)."""
    requirements = "\n".join(_requirements()) + "\n"
    key = hashlib.sha256(f"{image_ref}\n{requirements}".encode()).hexdigest()[:16]
    return _cache_root() / f"wheelhouse-{key}", requirements


def wheelhouse(image: str) -> Path:
    """The agent's dependencies as wheels for `image`'s Python, built in a throwaway container of it (once per
    image and requirements): the agent's image installs them without an index, and so can Harbor's agent
    (`--ak wheelhouse=DIR`), in seconds rather than a download per trial."""
    folder, requirements = _wheelhouse_folder(image_id(image))
    # One builder at a time (runs and test workers at once would each download it); the folder appears whole.
    with (folder.parent / f"{folder.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if folder.is_dir():
            return folder
        partial = folder.with_name(folder.name + ".part")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir()
        (partial / "requirements.txt").write_text(requirements, encoding="utf-8")
        script = "python3 -m venv /tmp/w && /tmp/w/bin/pip wheel --quiet -w /wheelhouse -r /wheelhouse/requirements.txt"
        _docker(
            *("run", "--rm", "--label", LABEL, "--user", f"{os.getuid()}:{os.getgid()}", "-e", "HOME=/tmp"),
            *("-v", f"{partial}:/wheelhouse", image, "sh", "-c", script),
            timeout=_BUILD_TIMEOUT,
        )
        partial.rename(folder)
    return folder


# uv when the image has it (the base image does, for Harbor's runner): it lays out litellm's thousands of files in
# half pip's time; pip otherwise.
_AGENT_DOCKERFILE = """\
FROM {base}
COPY wheelhouse/ {prefix}-src/wheelhouse/
RUN set -e; uv=/opt/harbor-acp-tools/uv; wheels={prefix}-src/wheelhouse; req=$wheels/requirements.txt; \\
    if [ -x $uv ]; then $uv venv -q --python python3 {prefix} \\
        && $uv pip install -q --python {prefix}/bin/python --no-index --find-links $wheels -r $req; \\
    else python3 -m venv {prefix} && {prefix}/bin/pip install -q --no-index --find-links $wheels -r $req; fi; \\
    rm -rf $wheels
COPY {wheel} {prefix}-src/{wheel}
RUN set -e; uv=/opt/harbor-acp-tools/uv; \\
    if [ -x $uv ]; then $uv pip install -q --python {prefix}/bin/python --no-deps --reinstall {prefix}-src/{wheel}; \\
    else {prefix}/bin/pip install -q --no-deps --force-reinstall {prefix}-src/{wheel}; fi; \\
    {prefix}/bin/coder-agent --version
"""


@dataclass(frozen=True)
class AgentImage:
    tag: str
    environment: str  # the image it was built on
    wheel: str  # the wheel's file name
    wheel_sha256: str


def agent_image(environment: str, log: Path | None = None) -> AgentImage:
    """The environment image with this checkout's agent installed at /opt/coder-agent (built unless it exists:
    its tag says what went in, so an image already there is taken without building the wheelhouse)."""
    wheel = agent_wheel()
    wheel_sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
    environment_id = image_id(environment)
    wheels, _ = _wheelhouse_folder(environment_id)
    dockerfile = _AGENT_DOCKERFILE.format(base=environment, prefix=AGENT_PREFIX, wheel=wheel.name)
    key = hashlib.sha256(f"{environment_id}\n{wheel_sha}\n{wheels.name}\n{dockerfile}".encode())
    tag = f"coder-agent-evals-agent:{key.hexdigest()[:16]}"
    if not image_exists(tag):
        with tempfile.TemporaryDirectory(prefix="evals-agent-image-") as tmp:
            context = Path(tmp)
            shutil.copytree(wheelhouse(environment), context / "wheelhouse")
            shutil.copy2(wheel, context / wheel.name)
            (context / "Dockerfile").write_text(dockerfile, encoding="utf-8")
            _build(tag, context, log)
    return AgentImage(tag, environment, wheel.name, wheel_sha)


def missing_in_image(image: str, modules: Sequence[str]) -> list[str]:
    """Those of `modules` the image's `python` cannot import (asked in a throwaway container)."""
    if not modules:
        return []
    probe = "import importlib.util,sys\nfor m in sys.argv[1:]:\n    importlib.util.find_spec(m) or print(m)"
    out = _docker("run", "--rm", "--label", LABEL, "--network", "none", image, "python", "-c", probe, *modules)
    return out.split()


class Container:
    """One trial's container; `exec_argv` gives the `docker exec` command line of a command in it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._count = 0

    @classmethod
    def start(cls, image: str, mounts: Sequence[tuple[Path, bool]], workdir: Path, name_hint: str) -> Container:
        """`docker run -d` of `image` with each (path, writable) bind-mounted at the same path."""
        for path, _ in mounts:
            if ":" in str(path) or "," in str(path):
                raise DockerError(f"cannot bind-mount {path}: a path with ':' or ',' cannot be given to docker -v")
        digest = hashlib.sha256(f"{name_hint}{os.getpid()}{os.urandom(8).hex()}".encode()).hexdigest()[:10]
        name = f"evals-{''.join(c if c.isalnum() or c in '_.-' else '-' for c in name_hint)[:40]}-{digest}"
        args = ["run", "-d", "--init", "--name", name, "--label", LABEL]
        args += ["--user", f"{os.getuid()}:{os.getgid()}", "--add-host", "host.docker.internal:host-gateway"]
        for path, writable in mounts:
            args += ["-v", f"{path}:{path}:{'rw' if writable else 'ro'}"]
        args += ["-w", str(workdir), image, "sleep", "infinity"]
        _docker(*args)
        return cls(name)

    def exec_argv(
        self, argv: Sequence[str], *, cwd: Path | str, env_names: Sequence[str] = (), stdin: bool = False
    ) -> tuple[list[str], str]:
        """(`docker exec` command line, the file holding the command's process group id in the container).

        The values of `env_names` are read by the docker client from its own environment (`-e NAME`), so no
        value (a key, say) is on a command line.
        """
        self._count += 1
        pid_file = f"/tmp/.evals-{self._count}.pgid"
        head = ["docker", "exec", *(["-i"] if stdin else []), "-w", str(cwd)]
        for name in env_names:
            head += ["-e", name]
        return [*head, self.name, "setsid", "-w", "sh", "-c", _IN_GROUP, pid_file, *argv], pid_file

    def kill_group(self, pid_file: str) -> None:
        """SIGKILL the group of the command whose id is in `pid_file` (nothing if it is gone)."""
        script = f"p=$(cat {shlex.quote(pid_file)} 2>/dev/null) && kill -KILL -$p 2>/dev/null; true"
        try:
            _docker("exec", self.name, "sh", "-c", script, timeout=30)
        except DockerError:
            pass  # the container is gone: so is the group

    def remove(self) -> None:
        try:
            _docker("rm", "-f", self.name, timeout=60)
        except DockerError:
            pass


def describe(image: str) -> dict[str, str]:
    """What a run records of an image: its id and its labels."""
    text = _docker("image", "inspect", "--format", "{{json .}}", image)
    info = json.loads(text)
    return {"image": image, "id": str(info.get("Id", ""))}


def client_env(names: Mapping[str, str]) -> dict[str, str]:
    """The docker client's environment: this process's, with the values `-e NAME` passes on."""
    return {**os.environ, **names}
