"""coder-agent as a Harbor agent: `harbor run -a evals.harbor_agent:CoderAgent ...` (Harbor imports this module;
the eval harness never does, so it runs on Harbor's Python, >= 3.12, and Harbor's own code is not imported here
anywhere else).

It is Harbor's generic ACP agent (its runner speaks ACP to the agent in the container and logs every session
update as ATIF) with coder-agent's registry entry, a `local` distribution at /opt/coder-agent, and an install
step that puts coder-agent there: from a wheel (`--ak wheel=dist/coder_agent-X-py3-none-any.whl`, with
`--ak wheelhouse=DIR` to take its dependencies from a folder instead of PyPI), else `coder-agent==VERSION` from
PyPI (`--ak version=...`, default the registry entry's). The model is Harbor's `-m` (as CODER_AGENT_MODEL);
keys and other settings are `--ae NAME=VALUE`, e.g.

    harbor run -d terminal-bench@2.0 -a evals.harbor_agent:CoderAgent -m anthropic/claude-sonnet-4-5 \\
        --ae ANTHROPIC_API_KEY="$ANTHROPIC_API_KEY"

After a trial, the tokens (input, cached, output) are the sums of what coder-agent reported per model call in
its usage updates (`_meta["coder-agent"].usage`), which Harbor's runner logs, so Harbor's result has them.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

from harbor.agents.installed.acp import AcpAgent, AcpOptions
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext
from pydantic import Field

PREFIX = "/opt/coder-agent"
REGISTRY_ENTRY = Path(__file__).resolve().parents[1] / "registry" / "coder-agent" / "agent.json"


class CoderAgentOptions(AcpOptions):
    wheel: str | None = Field(default=None, description="A coder-agent wheel on this machine to install.")
    wheelhouse: str | None = Field(
        default=None, description="A folder of wheels holding coder-agent's dependencies (installed with --no-index)."
    )


def _entry(model: str | None, version: str) -> dict[str, Any]:
    published = json.loads(REGISTRY_ENTRY.read_text(encoding="utf-8"))
    env = {"CODER_AGENT_MODEL": model} if model else {}
    local = {"cmd": f"{PREFIX}/bin/coder-agent", "args": ["acp"], "env": env}
    return {**published, "version": version, "distribution": {"local": local}}


def _wheel_version(wheel: str) -> str | None:
    match = re.match(r"coder_agent-([^-]+)-", Path(wheel).name)
    return match.group(1) if match else None


class CoderAgent(AcpAgent):
    """coder-agent, installed into the task's container, driven by Harbor's ACP runner."""

    options_model = CoderAgentOptions
    options: CoderAgentOptions

    def __init__(self, *args: Any, wheel: str | None = None, wheelhouse: str | None = None, **kwargs: Any) -> None:
        for name in ("registry_entry", "registry_entry_path", "registry_spec", "source"):
            if kwargs.get(name) is not None:
                raise ValueError(f"coder-agent's Harbor agent brings its own registry entry: drop {name}")
        published = json.loads(REGISTRY_ENTRY.read_text(encoding="utf-8"))["version"]
        version = kwargs.get("version") or (_wheel_version(wheel) if wheel else None) or published
        kwargs["registry_entry"] = _entry(kwargs.get("model_name"), version)
        kwargs["distribution_preference"] = "local"
        super().__init__(*args, wheel=wheel, wheelhouse=wheelhouse, **kwargs)
        self._wheel = Path(wheel).resolve() if wheel else None
        self._wheelhouse = Path(wheelhouse).resolve() if wheelhouse else None
        self._package_version = version
        if self._wheel is not None and not self._wheel.is_file():
            raise ValueError(f"wheel {wheel} is not a file")
        if self._wheelhouse is not None and not self._wheelhouse.is_dir():
            raise ValueError(f"wheelhouse {wheelhouse} is not a folder")

    @staticmethod
    def name() -> str:
        return "coder-agent"

    def _build_dependencies_command(self, kind: Any) -> str:
        # Harbor's set-up runs apt-get (update and install) on every trial; skipped when the image already has
        # what it would install (the evals' base image does), which also lets it run where apt cannot reach out.
        runner = f"{self._RUNNER_VENV_PATH}/bin/python"
        ready = (
            f"command -v python3 >/dev/null && command -v curl >/dev/null && [ -x {self._UV_INSTALL_DIR}/uv ]"
            f' && {runner} -c "import acp, sys; raise SystemExit(sys.version_info < (3, 12))"'
        )
        # When it does run, its set-up skips uv and the runner's virtualenv if the image has them, but then fails
        # on a chmod of the folder it would have installed its Python in: made first (in the same exec: each
        # one is a `docker compose exec`).
        setup = f"mkdir -p {self._PYTHON_INSTALL_DIR}\n{super()._build_dependencies_command(kind)}"
        return f"if {ready} >/dev/null 2>&1; then exit 0; fi\n{setup}"

    async def install(self, environment: BaseEnvironment) -> None:
        await super().install(environment)
        sources = ""
        if self._wheelhouse is not None:
            await environment.upload_dir(source_dir=self._wheelhouse, target_dir="/installed-agent/wheelhouse")
            sources = "--no-index --find-links /installed-agent/wheelhouse "
        if self._wheel is not None:
            target = f"/installed-agent/{self._wheel.name}"
            await environment.upload_file(source_path=self._wheel, target_path=target)
            spec = shlex.quote(target)
        else:
            spec = shlex.quote(f"coder-agent=={self._package_version}")
        # With the uv Harbor's set-up put there: twice as fast as pip at laying out litellm's thousands of files,
        # and it finds a Python >= 3.11 (the image's, or one uv installed for the runner).
        uv = f"{self._UV_INSTALL_DIR}/uv"
        await self.exec_as_root(
            environment,
            command=(
                f"{uv} venv --quiet --python '>=3.11' {PREFIX}"
                f" && {uv} pip install --quiet --python {PREFIX}/bin/python {sources}{spec}"
                f" && chmod -R a+rX {PREFIX} && {PREFIX}/bin/coder-agent --version"
            ),
            env={"UV_PYTHON_INSTALL_DIR": self._PYTHON_INSTALL_DIR, "UV_NATIVE_TLS": "1"},
        )

    def populate_context_post_run(self, context: AgentContext) -> None:
        super().populate_context_post_run(context)
        totals = {"inputTokens": 0, "cachedReadTokens": 0, "outputTokens": 0}
        seen = False
        for event in self._load_events():  # {"event_type": "session_update", "payload": {"update": {...}}}
            payload = event.get("payload")
            update = payload.get("update") if isinstance(payload, dict) else None
            if not isinstance(update, dict) or update.get("sessionUpdate") != "usage_update":
                continue
            meta = update.get("_meta")
            ours = meta.get("coder-agent") if isinstance(meta, dict) else None
            usage = ours.get("usage") if isinstance(ours, dict) else None
            if isinstance(usage, dict):
                seen = True
                for key in totals:
                    totals[key] += int(usage.get(key) or 0)
        if seen:
            context.n_input_tokens = totals["inputTokens"]
            context.n_cache_tokens = totals["cachedReadTokens"]
            context.n_output_tokens = totals["outputTokens"]
